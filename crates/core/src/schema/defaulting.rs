//! Port of apiextensions-apiserver v0.36.1 structural defaulting
//! (`pkg/apiserver/schema/defaulting`: `prunenulls.go` and `algorithm.go`), plus kubara's
//! `applySchemaDefaults` wrapper for service configs.
//!
//! Values are dispatched on their runtime JSON type, never on the schema `type`; junctors,
//! `required` and the `x-kubernetes-*` extensions play no role. Key order is preserved: new keys
//! are appended in schema property order and existing keys never move.

use serde_json::{Map, Value};

use super::structural::{AdditionalProperties, Structural};

/// `PruneNonNullableNullsWithoutDefaults` (defaulting/prunenulls.go).
///
/// Deletes object keys whose value is `null` when the key's schema is known, not nullable and has
/// no default. Array elements are never removed; nulls on unknown keys are kept.
pub fn prune_non_nullable_nulls_without_defaults(x: &mut Value, s: Option<&Structural>) {
    match x {
        Value::Object(m) => {
            let mut doomed = Vec::new();
            for (k, v) in m.iter_mut() {
                let field = s.and_then(|s| field_schema(s, k));
                if v.is_null() && field.is_some_and(|f| !f.nullable && f.default.is_none()) {
                    doomed.push(k.clone());
                } else {
                    prune_non_nullable_nulls_without_defaults(v, field);
                }
            }
            for k in doomed {
                // shift_remove keeps the order of the remaining keys.
                m.shift_remove(&k);
            }
        }
        Value::Array(a) => {
            let items = s.and_then(|s| s.items.as_deref());
            for v in a {
                prune_non_nullable_nulls_without_defaults(v, items);
            }
        }
        _ => {}
    }
}

/// `Default` (defaulting/algorithm.go).
///
/// Fills missing keys (and nulls on non-nullable fields) from the children's defaults, then
/// recurses into every key, including the ones just added, so defaults cascade. The default of
/// `s` itself is never applied to `x`; arrays are never created or extended.
#[allow(clippy::many_single_char_names)] // keeps upstream's x/s/k/v naming for side-by-side reading
pub fn default(x: &mut Value, s: Option<&Structural>) {
    let Some(s) = s else {
        return;
    };
    match x {
        Value::Object(m) => {
            for (k, prop) in &s.properties {
                let Some(d) = &prop.default else {
                    continue;
                };
                let fill = match m.get(k) {
                    None => true,
                    Some(v) => is_non_nullable_null(v, Some(prop)),
                };
                if fill {
                    // Map::insert keeps an existing key's position and appends a new one.
                    m.insert(k.clone(), d.clone());
                }
            }
            for (k, v) in m.iter_mut() {
                if let Some(prop) = s.property(k) {
                    default(v, Some(prop));
                } else if let Some(ap) = &s.additional_properties {
                    let ap_schema = ap.schema();
                    if is_non_nullable_null(v, ap_schema)
                        && let Some(d) = ap_schema.and_then(|a| a.default.as_ref())
                    {
                        *v = d.clone();
                    }
                    default(v, ap_schema);
                }
            }
        }
        Value::Array(a) => {
            let items = s.items.as_deref();
            for v in a {
                if is_non_nullable_null(v, items)
                    && let Some(d) = items.and_then(|i| i.default.as_ref())
                {
                    *v = d.clone();
                }
                default(v, items);
            }
        }
        _ => {}
    }
}

/// kubara's applySchemaDefaults: start from `{}` when absent, prune nulls, default, return None when the result is an empty object.
#[must_use]
pub fn default_config(config: Option<Value>, s: &Structural) -> Option<Value> {
    // A YAML `config: null` decodes to a nil map in Go, the same as an absent key.
    let mut x = match config {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v) => v,
    };
    prune_non_nullable_nulls_without_defaults(&mut x, Some(s));
    default(&mut x, Some(s));
    match &x {
        Value::Object(m) if m.is_empty() => None,
        _ => Some(x),
    }
}

/// The schema of key `k`: the declared property, else the additionalProperties schema.
fn field_schema<'a>(s: &'a Structural, k: &str) -> Option<&'a Structural> {
    s.property(k).or_else(|| {
        s.additional_properties
            .as_ref()
            .and_then(AdditionalProperties::schema)
    })
}

/// Upstream `isNonNullableNull`.
fn is_non_nullable_null(v: &Value, s: Option<&Structural>) -> bool {
    v.is_null() && s.is_some_and(|s| !s.nullable)
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{corpus_cert_manager, corpus_velero};
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// A schema as `NewStructural` sees it (no structural-schema checks, like the upstream tests).
    #[allow(clippy::needless_pass_by_value)] // callers pass json! literals
    fn st(raw: Value) -> Structural {
        Structural::from_json(&raw).unwrap()
    }

    fn defaulted(mut x: Value, s: &Structural) -> Value {
        default(&mut x, Some(s));
        x
    }

    fn pruned(mut x: Value, s: Option<&Structural>) -> Value {
        prune_non_nullable_nulls_without_defaults(&mut x, s);
        x
    }

    /// What the apiserver does: prune nulls, then default.
    fn applied(mut x: Value, s: &Structural) -> Value {
        prune_non_nullable_nulls_without_defaults(&mut x, Some(s));
        default(&mut x, Some(s));
        x
    }

    // --- TestDefault (algorithm_test.go) ---

    #[test]
    fn default_empty() {
        let mut x = Value::Null;
        default(&mut x, None);
        assert_eq!(x, Value::Null);
    }

    #[test]
    fn default_scalar() {
        let s = st(json!({"default": "foo"}));
        assert_eq!(defaulted(json!(4), &s), json!(4));
    }

    #[test]
    fn default_scalar_array() {
        let s = st(json!({"items": {"default": "foo"}}));
        assert_eq!(defaulted(json!([1, 2]), &s), json!([1, 2]));
    }

    #[test]
    fn default_object_array() {
        let s = st(json!({"items": {"properties": {
            "a": {"default": "A"}, "b": {"default": "B"}, "c": {"default": "C"}}}}));
        assert_eq!(
            defaulted(json!([{"a": 1}, {"b": 1}, {"c": 1}]), &s),
            json!([{"a": 1, "b": "B", "c": "C"}, {"a": "A", "b": 1, "c": "C"}, {"a": "A", "b": "B", "c": 1}])
        );
    }

    #[test]
    fn default_object_array_object() {
        let s = st(json!({"properties": {
            "array": {"items": {"properties": {"a": {"default": "A"}, "b": {"default": "B"}}}},
            "object": {"properties": {"a": {"default": "N"}, "b": {"default": "O"}}},
            "additionalProperties": {"additionalProperties": {"properties": {
                "a": {"default": "alpha"}, "b": {"default": "beta"}}}},
            "foo": {"default": "bar"}
        }}));
        let x = json!({"array": [{"a": 1}, {"b": 2}], "object": {"a": 1},
            "additionalProperties": {"x": {"a": 1}, "y": {"b": 2}}});
        let want = json!({"array": [{"a": 1, "b": "B"}, {"a": "A", "b": 2}], "object": {"a": 1, "b": "O"},
            "additionalProperties": {"x": {"a": 1, "b": "beta"}, "y": {"a": "alpha", "b": 2}}, "foo": "bar"});
        let got = defaulted(x, &s);
        assert_eq!(got, want);
        // Existing keys stay in place; new ones are appended in schema order.
        assert_eq!(
            got.to_string(),
            r#"{"array":[{"a":1,"b":"B"},{"b":2,"a":"A"}],"object":{"a":1,"b":"O"},"additionalProperties":{"x":{"a":1,"b":"beta"},"y":{"b":2,"a":"alpha"}},"foo":"bar"}"#
        );
    }

    #[test]
    fn default_empty_and_null() {
        let s = st(json!({"items": {"properties": {"a": {"default": "A"}}}}));
        let x = json!([{}, {"a": 1}, {"a": 0}, {"a": 0.0}, {"a": ""}, {"a": null}, {"a": []}, {"a": {}}]);
        let want = json!([{"a": "A"}, {"a": 1}, {"a": 0}, {"a": 0.0}, {"a": ""}, {"a": "A"}, {"a": []}, {"a": {}}]);
        let got = defaulted(x, &s);
        assert_eq!(got, want);
        assert_eq!(got.to_string(), want.to_string(), "0.0 must stay a float");
    }

    #[test]
    fn default_null_in_nullable_list() {
        let s = st(json!({"nullable": true, "items": {"properties": {"a": {"default": "A"}}}}));
        assert_eq!(defaulted(json!([null]), &s), json!([null]));
    }

    #[test]
    fn default_null_in_non_nullable_list() {
        let s = st(json!({"items": {"default": "A"}}));
        assert_eq!(defaulted(json!([null]), &s), json!(["A"]));
    }

    #[test]
    fn default_null_in_nullable_object() {
        let s = st(json!({"properties": {"a": {"nullable": true, "default": "A"}}}));
        assert_eq!(defaulted(json!({"a": null}), &s), json!({"a": null}));
    }

    #[test]
    fn default_null_in_non_nullable_object() {
        let s = st(json!({"properties": {"a": {"default": "A"}}}));
        assert_eq!(defaulted(json!({"a": null}), &s), json!({"a": "A"}));
    }

    #[test]
    fn default_null_in_nullable_object_with_additional_properties() {
        let s = st(json!({"additionalProperties": {"nullable": true, "default": "A"}}));
        assert_eq!(defaulted(json!({"a": null}), &s), json!({"a": null}));
    }

    #[test]
    fn default_null_in_non_nullable_object_with_additional_properties() {
        let s = st(json!({"additionalProperties": {"default": "A"}}));
        assert_eq!(defaulted(json!({"a": null}), &s), json!({"a": "A"}));
    }

    #[test]
    fn default_null_unknown_field() {
        let s = st(json!({"additionalProperties": true}));
        assert_eq!(defaulted(json!({"a": null}), &s), json!({"a": null}));
    }

    // --- TestPruneNonNullableNullsWithoutDefaults (prunenulls_test.go) ---

    #[test]
    fn prune_nulls_empty() {
        assert_eq!(pruned(Value::Null, None), Value::Null);
    }

    #[test]
    fn prune_nulls_scalar() {
        assert_eq!(pruned(json!(4), None), json!(4));
    }

    #[test]
    fn prune_nulls_scalar_array() {
        assert_eq!(pruned(json!([1, null]), None), json!([1, null]));
    }

    #[test]
    fn prune_nulls_object_array() {
        let s = st(json!({"items": {"properties": {
            "a": {"default": "A"},
            "b": {"nullable": true},
            "c": {"nullable": true, "default": "C"},
            "d": {}
        }}}));
        assert_eq!(
            pruned(
                json!([{"a": null}, {"b": null}, {"c": null}, {"d": null}, {"e": null}]),
                Some(&s)
            ),
            json!([{"a": null}, {"b": null}, {"c": null}, {}, {"e": null}])
        );
    }

    // --- Worked examples S1-S6 (kubara.md §2.5) ---

    fn s1() -> Structural {
        st(json!({"type": "object", "properties": {"clusterIssuer": {
            "type": "object", "default": {}, "properties": {
                "name": {"type": "string", "default": "letsencrypt-staging"},
                "server": {"type": "string", "default": "https://acme-staging.example/dir"},
                "email": {"type": "string"}}}}}))
    }

    #[test]
    fn s1_cert_manager_pattern() {
        let s = s1();
        let full = json!({"clusterIssuer": {"name": "letsencrypt-staging", "server": "https://acme-staging.example/dir"}});
        assert_eq!(applied(json!({}), &s), full);
        assert_eq!(
            applied(json!({"clusterIssuer": {"name": "prod"}}), &s),
            json!({"clusterIssuer": {"name": "prod", "server": "https://acme-staging.example/dir"}})
        );
        assert_eq!(applied(json!({"clusterIssuer": null}), &s), full);
        assert_eq!(applied(json!({"clusterIssuer": {"name": null}}), &s), full);
        assert_eq!(applied(json!({"clusterIssuer": {"email": null}}), &s), full);
    }

    #[test]
    fn s2_parent_without_default_leaves_subtree_absent() {
        let s = st(json!({"type": "object", "properties": {"clusterIssuer": {
            "type": "object", "properties": {
                "name": {"type": "string", "default": "letsencrypt-staging"},
                "server": {"type": "string", "default": "https://acme-staging.example/dir"},
                "email": {"type": "string"}}}}}));
        assert_eq!(applied(json!({}), &s), json!({}));
        assert_eq!(
            applied(json!({"clusterIssuer": {}}), &s),
            json!({"clusterIssuer": {"name": "letsencrypt-staging", "server": "https://acme-staging.example/dir"}})
        );
    }

    #[test]
    fn s3_nullable() {
        let s =
            st(json!({"properties": {"a": {"type": "string", "nullable": true, "default": "A"}}}));
        assert_eq!(applied(json!({}), &s), json!({"a": "A"}));
        assert_eq!(applied(json!({"a": null}), &s), json!({"a": null}));
        assert_eq!(applied(json!({"a": ""}), &s), json!({"a": ""}));
    }

    fn s4() -> Structural {
        st(json!({"properties": {"ports": {"type": "array", "items": {
            "type": "object", "properties": {"protocol": {"type": "string", "default": "TCP"}}}}}}))
    }

    #[test]
    fn s4_list_of_objects() {
        let s = s4();
        assert_eq!(applied(json!({}), &s), json!({}));
        assert_eq!(applied(json!({"ports": []}), &s), json!({"ports": []}));
        assert_eq!(
            applied(
                json!({"ports": [{"port": 80}, {"port": 53, "protocol": "UDP"}]}),
                &s
            ),
            json!({"ports": [{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]})
        );
    }

    fn s5() -> Structural {
        st(json!({"properties": {"annotations": {"type": "object",
            "additionalProperties": {"type": "string", "default": "x"}}}}))
    }

    #[test]
    fn s5_map_values() {
        assert_eq!(
            applied(json!({"annotations": {"a": null, "b": "y"}}), &s5()),
            json!({"annotations": {"a": "x", "b": "y"}})
        );
    }

    fn s6() -> Structural {
        st(
            json!({"properties": {"server": {"type": "object", "default": {"host": "h"}, "properties": {
            "host": {"type": "string", "default": "d"},
            "port": {"type": "integer", "default": 8080}}}}}),
        )
    }

    #[test]
    fn s6_default_cascade() {
        assert_eq!(
            applied(json!({}), &s6()),
            json!({"server": {"host": "h", "port": 8080}})
        );
    }

    // --- Extra cases (kubara.md §2.6, end) ---

    #[test]
    fn default_null_means_no_default() {
        let s = st(json!({"properties": {"a": {"type": "string", "default": null}}}));
        assert_eq!(s.property("a").unwrap().default, None);
        assert_eq!(applied(json!({}), &s), json!({}));
        // Without a default a non-nullable null is pruned.
        assert_eq!(applied(json!({"a": null}), &s), json!({}));
    }

    #[test]
    fn string_where_object_expected_is_untouched() {
        let s = s1();
        assert_eq!(
            applied(json!({"clusterIssuer": "oops"}), &s),
            json!({"clusterIssuer": "oops"})
        );
        // A map under a schema that only has items is left alone as well.
        assert_eq!(
            applied(json!({"ports": {"a": {}}}), &s4()),
            json!({"ports": {"a": {}}})
        );
    }

    #[test]
    fn defaults_are_deep_copies() {
        let s = st(
            json!({"items": {"properties": {"meta": {"type": "object", "default": {"labels": {"a": "b"}}}}}}),
        );
        let mut x = applied(json!([{}, {}]), &s);
        x[0]["meta"]["labels"]["a"] = json!("changed");
        assert_eq!(x[1]["meta"]["labels"]["a"], json!("b"));
        assert_eq!(
            s.items.as_ref().unwrap().property("meta").unwrap().default,
            Some(json!({"labels": {"a": "b"}}))
        );
    }

    #[test]
    fn root_default_is_never_applied() {
        let s = st(
            json!({"type": "object", "default": {"a": 1}, "properties": {"a": {"type": "integer"}}}),
        );
        assert_eq!(default_config(None, &s), None);
    }

    #[test]
    fn existing_keys_keep_their_position() {
        let s = s1();
        let got = applied(
            json!({"z": 1, "clusterIssuer": {"server": "s", "zz": 2}, "a": 2}),
            &s,
        );
        assert_eq!(
            got.to_string(),
            r#"{"z":1,"clusterIssuer":{"server":"s","zz":2,"name":"letsencrypt-staging"},"a":2}"#
        );
        let got = applied(
            json!({"clusterIssuer": {"email": null, "server": "s", "name": null}}),
            &s,
        );
        assert_eq!(
            got.to_string(),
            r#"{"clusterIssuer":{"server":"s","name":"letsencrypt-staging"}}"#
        );
    }

    #[test]
    fn default_config_starts_from_empty_and_omits_empty_results() {
        assert_eq!(
            default_config(None, &s1()),
            Some(
                json!({"clusterIssuer": {"name": "letsencrypt-staging", "server": "https://acme-staging.example/dir"}})
            )
        );
        assert_eq!(default_config(Some(Value::Null), &s4()), None);
        assert_eq!(default_config(None, &s4()), None);
        assert_eq!(default_config(Some(json!({})), &s4()), None);
        assert_eq!(
            default_config(Some(json!({"ports": []})), &s4()),
            Some(json!({"ports": []}))
        );
    }

    // --- Corpus (kubara-io/catalogs@e383e84 general/services) ---

    fn cert_manager() -> Structural {
        st(corpus_cert_manager())
    }

    fn velero() -> Structural {
        st(corpus_velero())
    }

    #[test]
    fn corpus_cert_manager_defaults() {
        let got = default_config(None, &cert_manager()).unwrap();
        assert_eq!(
            got.to_string(),
            json!({"clusterIssuer": {"name": "letsencrypt-staging", "email": "yourname@your-domain.de",
                "server": "https://acme-staging-v02.api.letsencrypt.org/directory"}})
            .to_string()
        );
        let got = default_config(
            Some(json!({"clusterIssuer": {"name": "letsencrypt-prod"}})),
            &cert_manager(),
        )
        .unwrap();
        assert_eq!(got["clusterIssuer"]["name"], json!("letsencrypt-prod"));
        assert_eq!(
            got["clusterIssuer"]["email"],
            json!("yourname@your-domain.de")
        );
    }

    #[test]
    fn corpus_velero_defaults() {
        let got = default_config(None, &velero()).unwrap();
        assert_eq!(
            got.to_string(),
            json!({"backupMode": "fs-backup", "backupStorage": {"create": true, "region": "eu01"}})
                .to_string()
        );
        let got =
            default_config(Some(json!({"backupStorage": {"create": false}})), &velero()).unwrap();
        assert_eq!(
            got,
            json!({"backupStorage": {"create": false, "region": "eu01"}, "backupMode": "fs-backup"})
        );
    }

    // --- Idempotence ---

    fn arb_json() -> impl Strategy<Value = Value> {
        let key = prop::sample::select(vec![
            "a",
            "b",
            "c",
            "x",
            "array",
            "object",
            "additionalProperties",
            "foo",
            "clusterIssuer",
            "name",
            "email",
            "server",
            "ports",
            "protocol",
            "annotations",
            "host",
            "port",
        ]);
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-3i64..3).prop_map(Value::from),
            prop::sample::select(vec!["", "x", "TCP"]).prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 4, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((key.clone(), inner), 0..4).prop_map(|kv| Value::Object(
                    kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
                )),
            ]
        })
    }

    fn fixed_schemas() -> Vec<Structural> {
        vec![
            s1(),
            s4(),
            s5(),
            s6(),
            cert_manager(),
            velero(),
            st(json!({"properties": {
                "array": {"items": {"properties": {"a": {"default": "A"}, "b": {"default": "B"}}}},
                "object": {"properties": {"a": {"default": "N"}, "b": {"default": "O"}}},
                "additionalProperties": {"additionalProperties": {"properties": {
                    "a": {"default": "alpha"}, "b": {"default": "beta"}}}},
                "foo": {"default": "bar"}
            }})),
            st(json!({"items": {"default": {"a": null}, "properties": {"a": {"default": "A"}}}})),
        ]
    }

    proptest! {
        #[test]
        fn default_is_idempotent(x in arb_json()) {
            for s in fixed_schemas() {
                let once = defaulted(x.clone(), &s);
                let twice = defaulted(once.clone(), &s);
                prop_assert_eq!(twice.to_string(), once.to_string());
            }
        }

        #[test]
        fn default_config_is_idempotent(x in arb_json()) {
            for s in fixed_schemas().iter().take(7) {
                let once = default_config(Some(x.clone()), s);
                let twice = default_config(once.clone(), s);
                prop_assert_eq!(twice, once);
            }
        }
    }
}
