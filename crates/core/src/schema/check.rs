//! The structural-schema checks: `NewStructural`, CRD keyword validation, `ValidateStructural`
//! and `ValidateDefaults` (apiextensions-apiserver), walking what `decode` reads.
//!
//! Imports `structural`, `decode`, `defaulting`, `prune`, `convert` and `validate`.

use std::collections::BTreeSet;

use serde_json::Value;

use super::convert::{convert_format, is_int_or_string_pattern, node_types, to_json_schema};
use super::decode::{Checker, Level, Props};
use super::prune::prune;
use super::structural::{AdditionalProperties, SchemaProblem, Structural, quote};
use super::validate::{compile, validate_with};
use crate::diagnostics::FieldPath;

/// Where a junctor-only restriction applies, for messages.
const IN_JUNCTOR: &str =
    "inside allOf/anyOf/oneOf/not (structural schemas allow only value validations there)";

impl Structural {
    /// Port of `NewStructural`: build the structural part without the structural-schema checks.
    ///
    /// Fails only where upstream fails (unsupported keywords, array `items`,
    /// `x-kubernetes-preserve-unknown-fields: false`) or where the JSON could not be decoded into
    /// `JSONSchemaProps` (wrong JSON types). Unknown keywords are ignored, as a Go decode drops them.
    ///
    /// # Errors
    /// Every problem found, with its schema path.
    pub fn from_json(raw: &Value) -> Result<Structural, Vec<SchemaProblem>> {
        let mut checker = Checker::default();
        let s = checker.structural(raw, &FieldPath::default(), Level::Root);
        if checker.problems.is_empty() {
            Ok(s)
        } else {
            Err(checker.problems)
        }
    }
}

impl Checker {
    /// Walk a structural (non-junctor) node and build its `Structural`.
    pub(super) fn structural(
        &mut self,
        node: &Value,
        path: &FieldPath,
        level: Level,
    ) -> Structural {
        let Some(p) = self.decode(node, path) else {
            return Structural::default();
        };
        let items = p
            .items
            .map(|v| Box::new(self.structural(v, &path.key("items"), Level::Item)));
        let props_path = path.key("properties");
        let mut properties = Vec::with_capacity(p.properties.len());
        for (k, v) in &p.properties {
            properties.push((
                (*k).to_owned(),
                self.structural(v, &props_path.key(k), Level::Field),
            ));
        }
        let additional_properties = match p.additional_properties {
            Some(Value::Bool(b)) => Some(AdditionalProperties::Bool(*b)),
            Some(v) => {
                // Upstream ValidateDefaults never follows additionalProperties.
                self.under_additional_properties += 1;
                let ap = self.structural(v, &path.key("additionalProperties"), Level::Field);
                self.under_additional_properties -= 1;
                Some(AdditionalProperties::Schema(Box::new(ap)))
            }
            None => None,
        };
        let s = Structural {
            type_: p.type_.unwrap_or_default().to_owned(),
            title: p.title.map(str::to_owned),
            description: p.description.map(str::to_owned),
            default: p.default.cloned(),
            nullable: p.nullable,
            format: p.format.map(str::to_owned),
            enum_: p.enum_.cloned().unwrap_or_default(),
            required: p.required.iter().map(|r| (*r).to_owned()).collect(),
            properties,
            additional_properties,
            items,
            x_preserve_unknown_fields: p.preserve_unknown_fields,
            x_int_or_string: p.int_or_string,
            x_embedded_resource: p.embedded_resource,
            x_list_type: p.list_type.map(str::to_owned),
            x_list_map_keys: p.list_map_keys.iter().map(|k| (*k).to_owned()).collect(),
        };
        self.junctors(&p, &s, path);
        if self.full {
            self.structural_rules(&p, &s, path, level);
            self.list_rules(&p, &s, path);
            if self.under_additional_properties == 0 {
                self.check_default(node, &s, path);
            }
        }
        s
    }

    /// `validateStructuralInvariants` plus the CRD keyword rules that need the whole node.
    fn structural_rules(&mut self, p: &Props<'_>, s: &Structural, path: &FieldPath, level: Level) {
        if !p.type_given
            && !s.x_int_or_string
            && !s.x_preserve_unknown_fields
            && !s.x_embedded_resource
        {
            let place = match level {
                Level::Root => "at the root",
                Level::Item => "for array items",
                Level::Field => "for object fields",
            };
            self.problem(
                &path.key("type"),
                format!("`type` must not be empty {place} (unless x-kubernetes-int-or-string or x-kubernetes-preserve-unknown-fields is true)"),
            );
        }
        if s.type_ == "array" && !p.items_given {
            self.problem(
                &path.key("items"),
                "`items` must be specified when `type` is array".to_owned(),
            );
        }
        if level == Level::Root {
            if !s.type_.is_empty() && s.type_ != "object" {
                self.problem(
                    &path.key("type"),
                    "`type` must be object at the root".to_owned(),
                );
            }
            if s.nullable {
                self.problem(
                    &path.key("nullable"),
                    "`nullable` must be false at the root".to_owned(),
                );
            }
            if s.additional_properties.is_some() {
                self.problem(
                    &path.key("additionalProperties"),
                    "`additionalProperties` must not be used at the root".to_owned(),
                );
            }
            if s.default.is_some() {
                self.warning(
                    &path.key("default"),
                    "a `default` on the root is never applied by Kubernetes; it has no effect"
                        .to_owned(),
                );
            }
        }
        if let Some(ap) = &s.additional_properties
            && !s.properties.is_empty()
            && *ap != AdditionalProperties::Bool(true)
        {
            self.problem(
                &path.key("additionalProperties"),
                "`additionalProperties` and `properties` are mutually exclusive (only `additionalProperties: true` may accompany `properties`)".to_owned(),
            );
        }
        if s.x_int_or_string && s.x_preserve_unknown_fields {
            self.problem(
                &path.key("x-kubernetes-preserve-unknown-fields"),
                "`x-kubernetes-preserve-unknown-fields` must be false if `x-kubernetes-int-or-string` is true".to_owned(),
            );
        }
        if s.x_int_or_string && s.x_embedded_resource {
            self.problem(
                &path.key("x-kubernetes-embedded-resource"),
                "`x-kubernetes-embedded-resource` must be false if `x-kubernetes-int-or-string` is true".to_owned(),
            );
        }
        if s.x_embedded_resource {
            self.embedded_rules(s, path);
        }
        // OpenAPI's numeric formats on their own types (kubebuilder writes `int32`/`int64` on
        // every Go integer field) only document the width; kube-openapi ignores them, and so do
        // we, without a warning on every run for every real CRD.
        let numeric_format = matches!(
            (p.format, p.type_),
            (Some("int32" | "int64"), Some("integer")) | (Some("float" | "double"), Some("number"))
        );
        if let Some(f) = p.format
            && !numeric_format
            && convert_format(
                f,
                &node_types(
                    p.type_.map(|t| Value::String(t.to_owned())).as_ref(),
                    s.x_int_or_string,
                ),
            )
            .is_none()
        {
            self.warning(
                &path.key("format"),
                format!(
                    "format {} is not validated by Kubernetes for this type and is ignored",
                    quote(f)
                ),
            );
        }
    }

    fn embedded_rules(&mut self, s: &Structural, path: &FieldPath) {
        if s.type_ != "object" {
            self.problem(
                &path.key("type"),
                "`type` must be object if `x-kubernetes-embedded-resource` is true".to_owned(),
            );
        }
        if s.additional_properties.is_some() {
            self.problem(
                &path.key("additionalProperties"),
                "`additionalProperties` must not be used if `x-kubernetes-embedded-resource` is true".to_owned(),
            );
        }
        if !s.x_preserve_unknown_fields && s.properties.is_empty() {
            self.problem(
                &path.key("properties"),
                "`properties` must not be empty if `x-kubernetes-embedded-resource` is true without `x-kubernetes-preserve-unknown-fields`".to_owned(),
            );
        }
        for (name, want) in [
            ("apiVersion", "string"),
            ("kind", "string"),
            ("metadata", "object"),
        ] {
            if let Some(field) = s.property(name)
                && field.type_ != want
            {
                self.problem(
                    &path.key("properties").key(name).key("type"),
                    format!("`type` must be {want} for `{name}` of an embedded resource"),
                );
            }
        }
    }

    /// `x-kubernetes-list-type`, `-list-map-keys` and `-map-type` rules.
    fn list_rules(&mut self, p: &Props<'_>, s: &Structural, path: &FieldPath) {
        let lt_path = path.key("x-kubernetes-list-type");
        if let Some(lt) = p.list_type {
            if !matches!(lt, "atomic" | "set" | "map") {
                self.problem(
                    &lt_path,
                    "`x-kubernetes-list-type` must be one of atomic, set, map".to_owned(),
                );
            }
            if s.type_ != "array" {
                self.problem(
                    &lt_path,
                    "`x-kubernetes-list-type` must only be used on type array".to_owned(),
                );
            }
        }
        if let Some(mt) = p.map_type {
            if !matches!(mt, "atomic" | "granular") {
                self.problem(
                    &path.key("x-kubernetes-map-type"),
                    "`x-kubernetes-map-type` must be one of atomic, granular".to_owned(),
                );
            }
            if s.type_ != "object" {
                self.problem(
                    &path.key("type"),
                    "`type` must be object if `x-kubernetes-map-type` is specified".to_owned(),
                );
            }
        }
        if !p.list_map_keys.is_empty() && p.list_type != Some("map") {
            self.problem(
                &lt_path,
                "`x-kubernetes-list-type` must be map if `x-kubernetes-list-map-keys` is non-empty"
                    .to_owned(),
            );
        }
        let raw_items = p.items.and_then(Value::as_object);
        if p.list_type == Some("set")
            && let (Some(item), Some(raw)) = (&s.items, raw_items)
        {
            let items_path = path.key("items");
            match item.type_.as_str() {
                "array"
                    if raw
                        .get("x-kubernetes-list-type")
                        .is_some_and(|t| t.as_str() != Some("atomic")) =>
                {
                    self.problem(
                        &items_path.key("x-kubernetes-list-type"),
                        "must be atomic as item of a list with x-kubernetes-list-type=set"
                            .to_owned(),
                    );
                }
                "object"
                    if raw.get("x-kubernetes-map-type").and_then(Value::as_str)
                        != Some("atomic") =>
                {
                    self.problem(
                        &items_path.key("x-kubernetes-map-type"),
                        "must be atomic as item of a list with x-kubernetes-list-type=set"
                            .to_owned(),
                    );
                }
                _ => {}
            }
        }
        if p.list_type == Some("map") {
            self.map_list_rules(p, s, path);
        }
    }

    fn map_list_rules(&mut self, p: &Props<'_>, s: &Structural, path: &FieldPath) {
        let keys_path = path.key("x-kubernetes-list-map-keys");
        if p.list_map_keys.is_empty() {
            self.problem(
                &keys_path,
                "`x-kubernetes-list-map-keys` must not be empty if `x-kubernetes-list-type` is map"
                    .to_owned(),
            );
        }
        let items_path = path.key("items");
        let Some(item) = &s.items else {
            if p.items_given {
                return;
            }
            self.problem(
                &items_path,
                "must have a schema if `x-kubernetes-list-type` is map".to_owned(),
            );
            return;
        };
        if item.type_ != "object" {
            self.problem(
                &items_path.key("type"),
                "must be object if parent array's `x-kubernetes-list-type` is map".to_owned(),
            );
            return;
        }
        let mut seen = BTreeSet::new();
        for key in &p.list_map_keys {
            if !seen.insert(*key) {
                self.problem(
                    &keys_path,
                    format!("must not contain {} more than once", quote(key)),
                );
            }
            let key_path = items_path.key("properties").key(key);
            let Some(field) = item.property(key) else {
                self.problem(
                    &keys_path,
                    format!("entry {} must name a property of the items", quote(key)),
                );
                continue;
            };
            if matches!(field.type_.as_str(), "array" | "object") {
                self.problem(
                    &key_path.key("type"),
                    "must be a scalar type because it is a key of a map list".to_owned(),
                );
            }
            if !item.required.iter().any(|r| r == key) && field.default.is_none() {
                self.problem(
                    &key_path,
                    "must be required or have a default because it is a key of a map list"
                        .to_owned(),
                );
            }
            if field.nullable {
                self.problem(
                    &key_path.key("nullable"),
                    "must be false because it is a key of a map list".to_owned(),
                );
            }
        }
    }

    /// Junctors of a structural node: their own rules, then completeness against `s`.
    fn junctors(&mut self, p: &Props<'_>, s: &Structural, path: &FieldPath) {
        // The two int-or-string exceptions (`isIntOrStringAnyOfPattern` / `...AllOfPattern`);
        // upstream detects the pattern without looking at x-kubernetes-int-or-string.
        let skip_any_of = is_int_or_string_pattern(&p.any_of);
        let skip_first_all_of_any_of = p
            .all_of
            .first()
            .and_then(|first| first.get("anyOf"))
            .and_then(Value::as_array)
            .is_some_and(|a| is_int_or_string_pattern(&a.iter().collect::<Vec<_>>()));
        for (name, list) in [
            ("allOf", &p.all_of),
            ("anyOf", &p.any_of),
            ("oneOf", &p.one_of),
        ] {
            for (i, j) in list.iter().enumerate() {
                let jp = path.key(name).index(i);
                match name {
                    "allOf" => self.nested(j, &jp, skip_first_all_of_any_of && i == 0, true),
                    "anyOf" if skip_any_of => {}
                    _ => self.nested(j, &jp, false, false),
                }
                if self.full {
                    self.completeness(j, s, path, &jp);
                }
            }
        }
        if let Some(n) = p.not {
            let np = path.key("not");
            self.nested(n, &np, false, false);
            if self.full {
                self.completeness(n, s, path, &np);
            }
        }
    }

    /// `validateNestedValueValidation`: a node inside a junctor.
    fn nested(&mut self, node: &Value, path: &FieldPath, skip_any_of: bool, cel_allowed: bool) {
        let Some(p) = self.decode(node, path) else {
            return;
        };
        let forbidden: [(&str, bool); 12] = [
            ("type", p.type_given),
            ("default", p.default.is_some()),
            ("title", p.title.is_some_and(|t| !t.is_empty())),
            ("description", p.description.is_some_and(|d| !d.is_empty())),
            ("nullable", p.nullable),
            ("externalDocs", p.external_docs),
            (
                "x-kubernetes-preserve-unknown-fields",
                p.preserve_unknown_fields,
            ),
            ("x-kubernetes-embedded-resource", p.embedded_resource),
            ("x-kubernetes-int-or-string", p.int_or_string),
            ("x-kubernetes-list-map-keys", !p.list_map_keys.is_empty()),
            ("x-kubernetes-list-type", p.list_type.is_some()),
            ("x-kubernetes-map-type", p.map_type.is_some()),
        ];
        for (keyword, present) in forbidden {
            if present {
                self.problem(
                    &path.key(keyword),
                    format!("`{keyword}` must not be used {IN_JUNCTOR}"),
                );
            }
        }
        // Rules under allOf are compiled and evaluated by `cel`; elsewhere in junctors upstream
        // forbids them.
        if p.has_validations && !cel_allowed {
            self.problem(
                &path.key("x-kubernetes-validations"),
                "`x-kubernetes-validations` inside anyOf/oneOf/not is not allowed (only under allOf)".to_owned(),
            );
        }
        if p.properties.iter().any(|(k, _)| *k == "metadata") {
            self.problem(
                &path.key("properties").key("metadata"),
                format!("`metadata` must not be specified {IN_JUNCTOR}"),
            );
        }
        if p.additional_properties.is_some() {
            self.problem(
                &path.key("additionalProperties"),
                format!("`additionalProperties` must not be used {IN_JUNCTOR}"),
            );
        }
        if !skip_any_of {
            for (i, j) in p.any_of.iter().enumerate() {
                self.nested(j, &path.key("anyOf").index(i), false, false);
            }
        }
        for (i, j) in p.all_of.iter().enumerate() {
            self.nested(j, &path.key("allOf").index(i), false, cel_allowed);
        }
        for (i, j) in p.one_of.iter().enumerate() {
            self.nested(j, &path.key("oneOf").index(i), false, false);
        }
        if let Some(n) = p.not {
            self.nested(n, &path.key("not"), false, false);
        }
        for (k, v) in &p.properties {
            self.nested(v, &path.key("properties").key(k), false, cel_allowed);
        }
        if let Some(items) = p.items {
            self.nested(items, &path.key("items"), false, cel_allowed);
        }
    }

    /// `validateNestedValueValidationCompleteness`: what a junctor names must exist in `s`.
    fn completeness(&mut self, v: &Value, s: &Structural, s_path: &FieldPath, v_path: &FieldPath) {
        let Value::Object(m) = v else {
            return;
        };
        for name in ["allOf", "anyOf", "oneOf"] {
            if let Some(Value::Array(list)) = m.get(name) {
                for (i, j) in list.iter().enumerate() {
                    self.completeness(j, s, s_path, &v_path.key(name).index(i));
                }
            }
        }
        if let Some(n) = m.get("not") {
            self.completeness(n, s, s_path, &v_path.key("not"));
        }
        if let Some(items @ Value::Object(_)) = m.get("items") {
            let (sp, vp) = (s_path.key("items"), v_path.key("items"));
            match &s.items {
                Some(si) => self.completeness(items, si, &sp, &vp),
                None => self.missing_in_structure(&sp, &vp),
            }
        }
        if let Some(Value::Object(props)) = m.get("properties") {
            for (k, pv) in props {
                let (sp, vp) = (
                    s_path.key("properties").key(k),
                    v_path.key("properties").key(k),
                );
                match s.property(k) {
                    Some(sf) => self.completeness(pv, sf, &sp, &vp),
                    None => self.missing_in_structure(&sp, &vp),
                }
            }
        }
    }

    fn missing_in_structure(&mut self, s_path: &FieldPath, v_path: &FieldPath) {
        self.problem(
            s_path,
            format!(
                "must be declared here because `{v_path}` uses it (everything named inside allOf/anyOf/oneOf/not must also exist outside them)"
            ),
        );
    }

    /// `ValidateDefaults` for one node: pruned, and valid against the node's own schema.
    fn check_default(&mut self, node: &Value, s: &Structural, path: &FieldPath) {
        let Some(default) = &s.default else {
            return;
        };
        let dpath = path.key("default");
        let mut pruned = default.clone();
        let removed = prune(&mut pruned, Some(s), s.x_embedded_resource);
        if !removed.is_empty() {
            let names: Vec<String> = removed.iter().map(|p| quote(&p.to_string())).collect();
            self.problem(
                &dpath,
                format!("must not have unknown fields: {}", names.join(", ")),
            );
        }
        // Deviation: the default is validated after its own children's defaults cascade into it
        // (as they do at runtime), so `default: {}` above required-but-defaulted fields passes.
        let mut effective = default.clone();
        super::defaulting::default(&mut effective, Some(s));
        let js = to_json_schema(node);
        // A node that does not compile already has a problem of its own (e.g. its pattern).
        if let Ok(validator) = compile(&js) {
            for e in validate_with(&validator, &js, &effective) {
                self.problem(&dpath, format!("invalid default: {e}"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::testutil::*;
    use serde_json::json;

    // --- forbidden keywords (NewStructural / CRD validation) ---

    #[test]
    fn unsupported_keywords_are_problems() {
        for (k, v) in [
            ("id", json!("x")),
            ("$schema", json!("http://json-schema.org/draft-07/schema#")),
            ("$ref", json!("#/definitions/x")),
            ("definitions", json!({"x": {"type": "string"}})),
            ("dependencies", json!({"a": ["b"]})),
            ("patternProperties", json!({"^a": {"type": "string"}})),
            ("additionalItems", json!(false)),
        ] {
            let mut a = json!({"type": "string"});
            a[k] = v;
            let found = field_problems(a.clone());
            assert_problem(
                &found,
                &format!("properties.a.{k}"),
                &format!("`{k}` is not supported"),
            );
            // NewStructural fails on these too.
            assert!(Structural::from_json(&obj(json!({"a": a}))).is_err(), "{k}");
        }
    }

    #[test]
    fn type_null_and_type_lists_are_problems() {
        assert_problem(
            &field_problems(json!({"type": "null"})),
            "properties.a.type",
            "use `nullable: true`",
        );
        assert_problem(
            &field_problems(json!({"type": ["string", "null"]})),
            "properties.a.type",
            "single type name",
        );
        assert_problem(
            &field_problems(json!({"type": "text"})),
            "properties.a.type",
            "unsupported `type` \"text\"",
        );
    }

    #[test]
    fn array_items_are_a_problem() {
        let found = field_problems(json!({"type": "array", "items": [{"type": "string"}]}));
        assert_problem(&found, "properties.a.items", "single schema, not an array");
    }

    #[test]
    fn unique_items_true_is_a_problem() {
        assert_problem(
            &field_problems(
                json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true}),
            ),
            "properties.a.uniqueItems",
            "not supported",
        );
        assert!(
            field_problems(
                json!({"type": "array", "items": {"type": "string"}, "uniqueItems": false})
            )
            .is_empty()
        );
    }

    #[test]
    fn nullable_at_root_is_a_problem() {
        assert_problem(
            &problems(&json!({"type": "object", "nullable": true})),
            "nullable",
            "at the root",
        );
    }

    #[test]
    fn additional_properties_with_properties() {
        for ap in [json!(false), json!({"type": "string"})] {
            let found = field_problems(
                json!({"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": ap}),
            );
            assert_problem(
                &found,
                "properties.a.additionalProperties",
                "mutually exclusive",
            );
        }
        assert!(field_problems(json!({"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": true})).is_empty());
        assert!(
            field_problems(json!({"type": "object", "additionalProperties": {"type": "string"}}))
                .is_empty()
        );
    }

    #[test]
    fn additional_properties_at_root_is_a_problem() {
        let found =
            problems(&json!({"type": "object", "additionalProperties": {"type": "string"}}));
        assert_problem(
            &found,
            "additionalProperties",
            "must not be used at the root",
        );
    }

    #[test]
    fn preserve_unknown_fields_false_is_a_problem() {
        let found = field_problems(
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": false}),
        );
        assert_problem(
            &found,
            "properties.a.x-kubernetes-preserve-unknown-fields",
            "must be true or undefined",
        );
    }

    #[test]
    fn unknown_keywords_are_problems() {
        let found = field_problems(json!({"type": "string", "const": "x"}));
        assert_eq!(
            found,
            vec![SchemaProblem {
                path: "properties.a.const".into(),
                message: "unknown keyword `const`: CRD schemas do not support it".into()
            }]
        );
        for k in [
            "$defs",
            "if",
            "examples",
            "prefixItems",
            "contains",
            "propertyNames",
        ] {
            let mut a = json!({"type": "string"});
            a[k] = json!({});
            assert_problem(
                &field_problems(a.clone()),
                &format!("properties.a.{k}"),
                "unknown keyword",
            );
            // A Go decode drops unknown fields, so NewStructural accepts them.
            assert!(Structural::from_json(&obj(json!({"a": a}))).is_ok());
        }
    }

    #[test]
    fn wrong_keyword_types_are_problems() {
        assert_problem(
            &field_problems(json!({"type": "object", "required": "a"})),
            "properties.a.required",
            "list of strings",
        );
        assert_problem(
            &field_problems(json!({"type": "string", "minLength": -1})),
            "properties.a.minLength",
            "non-negative integer",
        );
        assert_problem(
            &field_problems(json!({"type": "string", "minLength": "x"})),
            "properties.a.minLength",
            "non-negative integer",
        );
        assert_problem(
            &field_problems(json!({"type": "string", "maxLength": 1.5})),
            "properties.a.maxLength",
            "non-negative integer",
        );
        assert_problem(
            &field_problems(json!({"type": "integer", "minimum": "1"})),
            "properties.a.minimum",
            "must be a number",
        );
        assert_problem(
            &field_problems(json!({"type": "integer", "exclusiveMinimum": 1})),
            "properties.a.exclusiveMinimum",
            "must be a boolean",
        );
        assert_problem(
            &field_problems(json!({"type": "integer", "multipleOf": 0})),
            "properties.a.multipleOf",
            "greater than 0",
        );
        assert_problem(
            &field_problems(json!({"type": "string", "enum": "a"})),
            "properties.a.enum",
            "must be a list",
        );
        assert_problem(
            &field_problems(json!({"type": "string", "nullable": "yes"})),
            "properties.a.nullable",
            "must be a boolean",
        );
        assert_problem(
            &field_problems(json!({"type": "string", "description": 1})),
            "properties.a.description",
            "must be a string",
        );
        assert_problem(
            &field_problems(json!({"type": "object", "properties": []})),
            "properties.a.properties",
            "map of schemas",
        );
        assert_problem(
            &field_problems(json!({"type": "object", "additionalProperties": "x"})),
            "properties.a.additionalProperties",
            "boolean or a schema",
        );
        assert_problem(
            &field_problems(json!({"type": "string", "allOf": {}})),
            "properties.a.allOf",
            "list of schemas",
        );
        assert_problem(
            &field_problems(json!({"type": "object", "required": ["x", "x"]})),
            "properties.a.required",
            "more than once",
        );
        assert_problem(
            &field_problems(json!("string")),
            "properties.a",
            "must be a schema object",
        );
        assert_problem(&problems(&json!(true)), "", "must be a schema object");
    }

    #[test]
    fn all_problems_are_reported() {
        let found = problems(&json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "const": 1},
                "b": {"$ref": "#/x"},
                "c": {"type": "array"},
                "d": {"type": "integer", "default": "x"}
            }
        }));
        assert_problem(&found, "properties.a.const", "unknown keyword");
        assert_problem(&found, "properties.b.$ref", "not supported");
        assert_problem(&found, "properties.b.type", "must not be empty");
        assert_problem(&found, "properties.c.items", "must be specified");
        assert_problem(&found, "properties.d.default", "must be of type integer");
        assert_eq!(found.len(), 5, "{found:#?}");
    }

    // --- ValidateStructural ---

    #[test]
    fn type_is_required_at_root_items_and_fields() {
        assert_problem(
            &problems(&json!({"properties": {}})),
            "type",
            "must not be empty at the root",
        );
        assert_problem(
            &field_problems(json!({"description": "x"})),
            "properties.a.type",
            "for object fields",
        );
        assert_problem(
            &field_problems(json!({"type": "array", "items": {}})),
            "properties.a.items.type",
            "for array items",
        );
        assert_problem(
            &field_problems(json!({"type": "object", "additionalProperties": {"minLength": 1}})),
            "properties.a.additionalProperties.type",
            "for object fields",
        );
        assert!(field_problems(json!({"x-kubernetes-int-or-string": true})).is_empty());
        assert!(field_problems(json!({"x-kubernetes-preserve-unknown-fields": true})).is_empty());
        assert!(problems(&json!({"x-kubernetes-preserve-unknown-fields": true})).is_empty());
    }

    #[test]
    fn root_must_be_an_object() {
        assert_problem(
            &problems(&json!({"type": "string"})),
            "type",
            "must be object at the root",
        );
    }

    #[test]
    fn array_requires_items() {
        assert_problem(
            &field_problems(json!({"type": "array"})),
            "properties.a.items",
            "must be specified",
        );
    }

    #[test]
    fn junctors_forbid_structural_keywords() {
        for (k, v) in [
            ("type", json!("string")),
            ("default", json!("x")),
            ("title", json!("t")),
            ("description", json!("d")),
            ("nullable", json!(true)),
            ("x-kubernetes-preserve-unknown-fields", json!(true)),
            ("x-kubernetes-embedded-resource", json!(true)),
            ("x-kubernetes-int-or-string", json!(true)),
            ("x-kubernetes-list-type", json!("atomic")),
            ("x-kubernetes-list-map-keys", json!(["a"])),
            ("x-kubernetes-map-type", json!("atomic")),
            ("additionalProperties", json!({"type": "string"})),
            ("externalDocs", json!({"url": "https://example.com"})),
        ] {
            for junctor in ["allOf", "anyOf", "oneOf"] {
                let mut inner = json!({});
                inner[k] = v.clone();
                let mut a = json!({"type": "string"});
                a[junctor] = json!([inner]);
                let found = field_problems(a);
                assert_problem(
                    &found,
                    &format!("properties.a.{junctor}[0].{k}"),
                    "must not be used inside allOf/anyOf/oneOf/not",
                );
            }
            let mut inner = json!({});
            inner[k] = v.clone();
            let found = field_problems(json!({"type": "string", "not": inner}));
            assert_problem(
                &found,
                &format!("properties.a.not.{k}"),
                "must not be used inside",
            );
        }
        // Empty title/description and `nullable: false` are fine.
        assert!(field_problems(json!({"type": "string", "allOf": [{"title": "", "nullable": false, "minLength": 1}]})).is_empty());
        let found = field_problems(
            json!({"type": "object", "properties": {"metadata": {"type": "object"}},
            "anyOf": [{"properties": {"metadata": {"required": ["x"]}}}]}),
        );
        assert_problem(
            &found,
            "properties.a.anyOf[0].properties.metadata",
            "must not be specified inside",
        );
        // Nested deeper too.
        let found = field_problems(
            json!({"type": "object", "properties": {"b": {"type": "string"}},
            "oneOf": [{"properties": {"b": {"type": "string"}}}]}),
        );
        assert_problem(
            &found,
            "properties.a.oneOf[0].properties.b.type",
            "must not be used inside",
        );
    }

    #[test]
    fn int_or_string_patterns_may_carry_types() {
        let any_of = json!({"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]});
        assert!(field_problems(any_of).is_empty());
        let all_of = json!({"x-kubernetes-int-or-string": true,
            "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}, {"anyOf": [{"minimum": 1}, {"pattern": "^[0-9]+%$"}]}]});
        assert!(field_problems(all_of).is_empty());
        // Upstream spots the pattern alone, but such a node still needs a type of its own.
        let found = field_problems(json!({"anyOf": [{"type": "integer"}, {"type": "string"}]}));
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_problem(&found, "properties.a.type", "must not be empty");
        // Only the first allOf entry may carry the pattern.
        let found = field_problems(json!({"x-kubernetes-int-or-string": true,
            "allOf": [{"minimum": 0}, {"anyOf": [{"type": "integer"}, {"type": "string"}]}]}));
        assert_problem(
            &found,
            "properties.a.allOf[1].anyOf[0].type",
            "must not be used inside",
        );
        // And only the exact pattern.
        let found = field_problems(json!({"x-kubernetes-int-or-string": true,
            "anyOf": [{"type": "integer"}, {"type": "string", "minLength": 1}]}));
        assert_problem(
            &found,
            "properties.a.anyOf[1].type",
            "must not be used inside",
        );
    }

    #[test]
    fn junctor_completeness() {
        let found = field_problems(
            json!({"type": "object", "properties": {"b": {"type": "string"}},
            "allOf": [{"properties": {"c": {"minLength": 1}}}]}),
        );
        assert_problem(
            &found,
            "properties.a.properties.c",
            "`properties.a.allOf[0].properties.c` uses it",
        );
        let found =
            field_problems(json!({"type": "string", "anyOf": [{"items": {"minLength": 1}}]}));
        assert_problem(
            &found,
            "properties.a.items",
            "`properties.a.anyOf[0].items` uses it",
        );
        let found = field_problems(
            json!({"type": "object", "properties": {"b": {"type": "object"}},
            "not": {"anyOf": [{"properties": {"b": {"properties": {"z": {"minLength": 1}}}}}]}}),
        );
        assert_problem(
            &found,
            "properties.a.properties.b.properties.z",
            "not.anyOf[0].properties.b.properties.z",
        );
        assert!(
            field_problems(
                json!({"type": "object", "properties": {"b": {"type": "string"}},
            "oneOf": [{"required": ["b"]}, {"properties": {"b": {"minLength": 2}}}]})
            )
            .is_empty()
        );
    }

    #[test]
    fn int_or_string_excludes_other_extensions() {
        let found = field_problems(
            json!({"x-kubernetes-int-or-string": true, "x-kubernetes-preserve-unknown-fields": true}),
        );
        assert_problem(
            &found,
            "properties.a.x-kubernetes-preserve-unknown-fields",
            "must be false if `x-kubernetes-int-or-string`",
        );
        let found = field_problems(json!({"type": "object", "x-kubernetes-int-or-string": true,
            "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}));
        assert_problem(
            &found,
            "properties.a.x-kubernetes-embedded-resource",
            "must be false if `x-kubernetes-int-or-string`",
        );
    }

    #[test]
    fn embedded_resource_rules() {
        let found = field_problems(
            json!({"type": "string", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}),
        );
        assert_problem(
            &found,
            "properties.a.type",
            "must be object if `x-kubernetes-embedded-resource`",
        );
        let found = field_problems(
            json!({"type": "object", "x-kubernetes-embedded-resource": true, "additionalProperties": {"type": "string"}}),
        );
        assert_problem(
            &found,
            "properties.a.additionalProperties",
            "must not be used if `x-kubernetes-embedded-resource`",
        );
        assert_problem(&found, "properties.a.properties", "must not be empty");
        let found = field_problems(
            json!({"type": "object", "x-kubernetes-embedded-resource": true,
            "properties": {"kind": {"type": "integer"}, "metadata": {"type": "string"}}}),
        );
        assert_problem(
            &found,
            "properties.a.properties.kind.type",
            "must be string",
        );
        assert_problem(
            &found,
            "properties.a.properties.metadata.type",
            "must be object",
        );
        assert!(field_problems(json!({"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true})).is_empty());
    }

    #[test]
    fn pattern_must_compile() {
        let found = field_problems(json!({"type": "string", "pattern": "(a"}));
        assert_problem(
            &found,
            "properties.a.pattern",
            "`pattern` \"(a\" is not a valid Go (RE2) regular expression: missing closing ): `(a`",
        );
        // Look-around is not RE2 (nor regex-crate) syntax.
        assert_problem(
            &field_problems(json!({"type": "string", "pattern": "(?=a)"})),
            "properties.a.pattern",
            "invalid or unsupported Perl syntax: `(?=`",
        );
        // Go rejects what the regex crate would take.
        assert_problem(
            &field_problems(json!({"type": "string", "pattern": "^a{1001}$"})),
            "properties.a.pattern",
            "invalid repeat count: `{1001}`",
        );
        assert!(field_problems(json!({"type": "string", "pattern": "^[a-z]+$"})).is_empty());
    }

    #[test]
    fn issue8_go_patterns_load_and_validate() {
        // prometheus-operator PrometheusRule `partial_response_strategy` writes `(?i)` inside.
        let schema = obj(json!({
            "s": {"type": "string", "pattern": "^(?i)(abort|warn)?$"},
            "d": {"type": "string", "pattern": "^\\d+$"},
        }));
        let c = parsed(&schema);
        assert!(c.validate(&json!({"s": "Warn", "d": "42"})).is_empty());
        assert_eq!(
            errors(&schema, &json!({"s": "fail", "d": "\u{663}"})),
            [
                "d: Invalid value: \"\u{663}\": d in body should match '^\\d+$'",
                r#"s: Invalid value: "fail": s in body should match '^(?i)(abort|warn)?$'"#,
            ]
        );
    }

    #[test]
    fn list_and_map_types() {
        let found = field_problems(
            json!({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "bag"}),
        );
        assert_problem(
            &found,
            "properties.a.x-kubernetes-list-type",
            "one of atomic, set, map",
        );
        let found = field_problems(json!({"type": "object", "x-kubernetes-list-type": "set"}));
        assert_problem(
            &found,
            "properties.a.x-kubernetes-list-type",
            "only be used on type array",
        );
        let found = field_problems(json!({"type": "object", "x-kubernetes-map-type": "deep"}));
        assert_problem(
            &found,
            "properties.a.x-kubernetes-map-type",
            "one of atomic, granular",
        );
        let found = field_problems(json!({"type": "string", "x-kubernetes-map-type": "atomic"}));
        assert_problem(
            &found,
            "properties.a.type",
            "must be object if `x-kubernetes-map-type`",
        );
        let found = field_problems(
            json!({"type": "array", "items": {"type": "object"}, "x-kubernetes-list-type": "map"}),
        );
        assert_problem(
            &found,
            "properties.a.x-kubernetes-list-map-keys",
            "must not be empty",
        );
        let found = field_problems(
            json!({"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}},
            "x-kubernetes-list-map-keys": ["k"], "x-kubernetes-list-type": "atomic"}),
        );
        assert_problem(&found, "properties.a.x-kubernetes-list-type", "must be map");
        let found = field_problems(
            json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k", "o", "n", "k"],
            "items": {"type": "object", "required": ["o"], "properties": {
                "k": {"type": "string"}, "o": {"type": "object"}, "n": {"type": "string", "nullable": true, "default": "x"}}}}),
        );
        assert_problem(
            &found,
            "properties.a.items.properties.k",
            "must be required or have a default",
        );
        assert_problem(
            &found,
            "properties.a.items.properties.o.type",
            "must be a scalar type",
        );
        assert_problem(
            &found,
            "properties.a.items.properties.n.nullable",
            "must be false",
        );
        assert_problem(
            &found,
            "properties.a.x-kubernetes-list-map-keys",
            "more than once",
        );
        let found = field_problems(
            json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["z"],
            "items": {"type": "object", "properties": {"k": {"type": "string"}}}}),
        );
        assert_problem(
            &found,
            "properties.a.x-kubernetes-list-map-keys",
            "must name a property of the items",
        );
        let found = field_problems(
            json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
            "items": {"type": "string"}}),
        );
        assert_problem(&found, "properties.a.items.type", "must be object");
        let found = field_problems(
            json!({"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "object"}}),
        );
        assert_problem(
            &found,
            "properties.a.items.x-kubernetes-map-type",
            "must be atomic",
        );
        let found = field_problems(json!({"type": "array", "x-kubernetes-list-type": "set",
            "items": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}}));
        assert_problem(
            &found,
            "properties.a.items.x-kubernetes-list-type",
            "must be atomic",
        );
        assert!(field_problems(json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "port"],
            "items": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string"}, "port": {"type": "integer", "default": 80}}}})).is_empty());
        assert!(field_problems(json!({"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}})).is_empty());
    }

    #[test]
    fn cel_rules_are_accepted_without_a_warning() {
        // Issue 11: rules are compiled and evaluated now (schema::cel), so no warning.
        let schema = obj(json!({"a": {"type": "string", "x-kubernetes-validations": [
            {"rule": "self.size() > 1", "message": "too short", "reason": "FieldValueInvalid", "optionalOldSelf": true}]}}));
        let c = parsed(&schema);
        assert!(c.warnings().is_empty(), "{:?}", c.warnings());
        assert!(c.has_cel_rules());
        // Allowed under allOf, not under anyOf/oneOf/not.
        assert!(field_problems(json!({"type": "string", "allOf": [{"x-kubernetes-validations": [{"rule": "true"}]}]})).is_empty());
        let found = field_problems(
            json!({"type": "string", "anyOf": [{"x-kubernetes-validations": [{"rule": "true"}]}]}),
        );
        assert_problem(
            &found,
            "properties.a.anyOf[0].x-kubernetes-validations",
            "only under allOf",
        );
        let found = field_problems(
            json!({"type": "string", "x-kubernetes-validations": [{"message": "m", "bogus": 1, "reason": "Nope"}]}),
        );
        assert_problem(
            &found,
            "properties.a.x-kubernetes-validations[0].rule",
            "is required",
        );
        assert_problem(
            &found,
            "properties.a.x-kubernetes-validations[0].bogus",
            "unknown field",
        );
        assert_problem(
            &found,
            "properties.a.x-kubernetes-validations[0].reason",
            "must be one of",
        );
        assert_problem(
            &field_problems(json!({"type": "string", "x-kubernetes-validations": {}})),
            "properties.a.x-kubernetes-validations",
            "list of rules",
        );
    }

    #[test]
    fn unknown_format_is_a_warning() {
        let c = parsed(&obj(
            json!({"a": {"type": "string", "format": "int-or-string"}, "b": {"type": "string", "format": "date-time"}}),
        ));
        assert_eq!(c.warnings().len(), 1, "{:?}", c.warnings());
        assert_eq!(c.warnings()[0].path, "properties.a.format");
    }

    /// Issue 8 point 2 (acceptance review): kubebuilder's `int32`/`int64` on integers and
    /// `float`/`double` on numbers are OpenAPI's own numeric formats; a real CRD schema has
    /// dozens of them and got a warning for each on every run. A string format on a number
    /// is still a warning.
    #[test]
    fn issue8_numeric_formats_on_their_types_are_no_warning() {
        let c = parsed(&obj(json!({
            "a": {"type": "integer", "format": "int32"},
            "b": {"type": "integer", "format": "int64"},
            "c": {"type": "number", "format": "double"},
            "d": {"type": "number", "format": "float"},
            "e": {"type": "integer", "format": "email"},
            "f": {"type": "string", "format": "int32"}
        })));
        let paths: Vec<String> = c.warnings().iter().map(|w| w.path.to_string()).collect();
        assert_eq!(paths, ["properties.e.format", "properties.f.format"]);
    }

    // --- ValidateDefaults ---

    #[test]
    fn good_defaults_pass() {
        let c = parsed(&obj(json!({
            "a": {"type": "object", "default": {"x": "1", "m": {"k": "v"}}, "properties": {
                "x": {"type": "string", "pattern": "^[0-9]+$"},
                "m": {"type": "object", "additionalProperties": {"type": "string"}}}},
            "b": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "default": {"anything": {"goes": 1}}},
            "c": {"type": "string", "format": "email", "default": "a@b.example"},
            "d": {"type": "integer", "default": 3, "minimum": 1, "exclusiveMinimum": true},
            "e": {"x-kubernetes-int-or-string": true, "default": "50%"},
            "f": {"type": "string", "nullable": true, "default": null},
            "g": {"type": "array", "items": {"type": "object", "properties": {"p": {"type": "integer", "default": 1}}}, "default": [{"p": 2}]}
        })));
        assert!(c.warnings().is_empty(), "{:?}", c.warnings());
    }

    #[test]
    fn defaults_must_validate_against_their_schema() {
        let found = field_problems(json!({"type": "integer", "default": "x"}));
        assert_eq!(
            found,
            vec![SchemaProblem {
                path: "properties.a.default".into(),
                message: "invalid default: Invalid value: \"string\": must be of type integer: \"string\"".into()
            }]
        );
        let found = field_problems(
            json!({"type": "object", "default": {"n": 70000}, "properties": {"n": {"type": "integer", "maximum": 65535}}}),
        );
        assert_problem(
            &found,
            "properties.a.default",
            "n: Invalid value: 70000: n in body should be less than or equal to 65535",
        );
        assert_problem(
            &field_problems(json!({"type": "string", "format": "email", "default": "nope"})),
            "properties.a.default",
            "must be of type email",
        );
        assert_problem(
            &field_problems(json!({"type": "string", "enum": ["x"], "default": "y"})),
            "properties.a.default",
            "Unsupported value",
        );
        // Items defaults are checked too.
        let found =
            field_problems(json!({"type": "array", "items": {"type": "string", "default": 1}}));
        assert_problem(
            &found,
            "properties.a.items.default",
            "must be of type string",
        );
        // Root defaults are validated as upstream does (and warned about).
        assert_problem(
            &problems(&json!({"type": "object", "default": 1})),
            "default",
            "must be of type object",
        );
    }

    #[test]
    fn defaults_are_checked_after_their_children_cascade() {
        // `default: {}` is fine when every required child has a default of its own ...
        assert!(
            field_problems(json!({"type": "object", "default": {}, "required": ["x"],
            "properties": {"x": {"type": "string", "default": "d"}}}))
            .is_empty()
        );
        // ... but not when one of them has none.
        let found = field_problems(
            json!({"type": "object", "default": {}, "required": ["x", "y"],
            "properties": {"x": {"type": "string", "default": "d"}, "y": {"type": "string"}}}),
        );
        assert_eq!(
            found,
            vec![SchemaProblem {
                path: "properties.a.default".into(),
                message: "invalid default: y: Required value".into()
            }]
        );
    }

    #[test]
    fn defaults_must_not_have_unknown_fields() {
        let found = field_problems(
            json!({"type": "object", "default": {"x": 1, "y": 2, "z": {"w": 1}},
            "properties": {"x": {"type": "integer"}, "z": {"type": "object", "properties": {}}}}),
        );
        assert_problem(
            &found,
            "properties.a.default",
            r#"must not have unknown fields: "z.w", "y""#,
        );
        // additionalProperties: true keeps keys but prunes inside nested objects (upstream semantics).
        let found = field_problems(
            json!({"type": "object", "additionalProperties": true, "default": {"k": {"n": 1}, "s": "x"}}),
        );
        assert_problem(
            &found,
            "properties.a.default",
            r#"must not have unknown fields: "k.n""#,
        );
    }

    #[test]
    fn defaults_inside_additional_properties_are_not_validated() {
        assert!(
            field_problems(
                json!({"type": "object", "additionalProperties": {"type": "string", "default": 1}})
            )
            .is_empty()
        );
    }

    #[test]
    fn root_default_is_a_warning() {
        let c = parsed(&json!({"type": "object", "default": {}}));
        assert_eq!(c.warnings().len(), 1);
        assert_eq!(c.warnings()[0].path, "default");
        assert!(c.warnings()[0].message.contains("never applied"));
    }

    // --- Structural model ---

    #[test]
    fn structural_keeps_source_order_and_fields() {
        let c = parsed(&json!({"type": "object", "properties": {
            "z": {"type": "string", "title": "Z", "description": "zed", "format": "email", "enum": ["a@b.c"], "default": "a@b.c"},
            "a": {"type": "object", "required": ["q"], "properties": {"q": {"type": "string"}}},
            "m": {"type": "object", "additionalProperties": {"type": "integer", "nullable": true}},
            "l": {"type": "array", "items": {"x-kubernetes-int-or-string": true}},
            "e": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}
        }}));
        let s = c.structural();
        let names: Vec<&str> = s.properties.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["z", "a", "m", "l", "e"]);
        let z = s.property("z").unwrap();
        assert_eq!(
            (
                z.type_.as_str(),
                z.title.as_deref(),
                z.description.as_deref(),
                z.format.as_deref()
            ),
            ("string", Some("Z"), Some("zed"), Some("email"))
        );
        assert_eq!(z.enum_, [json!("a@b.c")]);
        assert_eq!(s.property("a").unwrap().required, ["q"]);
        let ap = s
            .property("m")
            .unwrap()
            .additional_properties
            .as_ref()
            .unwrap()
            .schema()
            .unwrap();
        assert!(ap.nullable);
        assert!(
            s.property("l")
                .unwrap()
                .items
                .as_ref()
                .unwrap()
                .x_int_or_string
        );
        let e = s.property("e").unwrap();
        assert!(e.x_embedded_resource && e.x_preserve_unknown_fields);
        assert_eq!(c.raw()["properties"]["z"]["title"], json!("Z"));
    }

    #[test]
    fn from_json_reports_only_new_structural_errors() {
        // Structural-schema rules are not NewStructural's business ...
        let s = Structural::from_json(&json!({"properties": {"a": {"items": {}}}})).unwrap();
        assert!(s.property("a").unwrap().items.is_some());
        // ... but forbidden keywords, array items and wrong JSON types are.
        let err = Structural::from_json(&json!({"properties": {"a": {"items": [{}]}, "b": {"x-kubernetes-preserve-unknown-fields": false},
            "c": {"allOf": [{"$ref": "#/x"}]}, "d": {"minLength": "1"}}})).unwrap_err();
        let paths: Vec<String> = err.iter().map(|p| p.path.to_string()).collect();
        assert_eq!(
            paths,
            [
                "properties.a.items",
                "properties.b.x-kubernetes-preserve-unknown-fields",
                "properties.c.allOf[0].$ref",
                "properties.d.minLength"
            ]
        );
    }
}
