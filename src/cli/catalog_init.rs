//! `catalog init DIR [--service NAME]`: a team catalog to start from (issue 23, SPEC §6.7).
//! What it writes passes `catalog lint` and renders (a test holds that); it never overwrites:
//! DIR must be new or empty, and every file is created with `create_new`.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;

use super::{CliError, Stdout};

/// `catalog init`'s arguments.
#[derive(Debug, Args)]
pub(super) struct InitArgs {
    /// The catalog directory to create (new, or empty); the catalog is named after it
    dir: PathBuf,
    /// The service's ID: a lower-case RFC 1123 label starting with a letter (its kind is the
    /// ID in PascalCase)
    #[arg(long, value_name = "NAME", default_value = "hello")]
    service: String,
}

/// Write the scaffold.
pub(super) fn run(args: &InitArgs) -> Result<(), CliError> {
    let dir = &args.dir;
    let shown = dir.display().to_string();
    let name = catalog_name(dir)?;
    let id = &args.service;
    let valid = id.len() <= 63
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !valid {
        return Err(CliError::Usage(format!(
            "--service {id:?}: must be an rfc 1123 label that starts with a letter (lower case letters, digits and '-', at most 63 characters)"
        )));
    }
    let definition = service_yaml(&name, id);
    check_definition(id, &definition)?;
    if dir.exists() {
        let mut entries = fs_err::read_dir(dir)?;
        if entries.next().is_some() {
            return Err(CliError::Usage(format!(
                "{shown} is not empty: catalog init writes a new catalog and never overwrites files; name a new or empty directory"
            )));
        }
    }
    let files = [
        ("catalog.yaml".to_owned(), catalog_yaml(&name)),
        (format!("services/{id}.yaml"), definition),
        (
            format!("charts/{id}/deployment.yaml.j2"),
            TEMPLATE.to_owned(),
        ),
    ];
    let mut out = String::new();
    for (file, text) in &files {
        let path = dir.join(file);
        if let Some(parent) = path.parent() {
            fs_err::create_dir_all(parent)?;
        }
        let mut f = fs_err::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        f.write_all(text.as_bytes())?;
        let _ = writeln!(out, "created {}", path.display());
    }
    let kind = crate::gvk::pascal_case(id);
    let _ = write!(
        out,
        "\nNext:\n  krm-catalog catalog lint {shown}\n  krm-catalog catalog lint {shown} --set replicas=2\n  krm-catalog explain {kind} --catalog {shown} --recursive\n"
    );
    Stdout::print(&out)
}

/// The catalog's name: its directory's, which must be a DNS subdomain.
fn catalog_name(dir: &Path) -> Result<String, CliError> {
    let base = fs_err::canonicalize(dir)
        .ok()
        .as_deref()
        .and_then(Path::file_name)
        .or_else(|| dir.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if crate::gvk::is_dns_subdomain(&base) {
        Ok(base)
    } else {
        Err(CliError::Usage(format!(
            "{}: the catalog is named after its directory, and \"{base}\" is not a DNS subdomain (lower-case letters, digits, '-' and '.'); choose a directory name such as team-catalog",
            dir.display()
        )))
    }
}

/// The service ID by the rules every ServiceDefinition is read with (its messages too).
fn check_definition(id: &str, text: &str) -> Result<(), CliError> {
    let doc =
        crate::yaml::parse(text).map_err(|e| CliError::Usage(format!("--service {id}: {e}")))?;
    match crate::service::definition::parse(&doc) {
        // The ID must come back as given (no YAML of its own in it).
        Ok(def) if def.id == id => Ok(()),
        Ok(_) => Err(CliError::Usage(format!(
            "--service {id:?}: must be an rfc 1123 label that starts with a letter (lower case letters, digits and '-', at most 63 characters)"
        ))),
        // The name's own problem, not what follows from it (its kind).
        Err(problems) => Err(CliError::Usage(format!(
            "--service {id}: {}",
            problems
                .iter()
                .find(|p| p.path == "metadata.name")
                .or(problems.first())
                .map(|p| p.message.clone())
                .unwrap_or_default()
        ))),
    }
}

fn catalog_yaml(name: &str) -> String {
    format!(
        "# The catalog's name and version: generated objects name it as {name}@0.1.0.\n\
         apiVersion: kubara.io/v1alpha1\n\
         kind: Catalog\n\
         metadata:\n  name: {name}\n\
         spec:\n  version: 0.1.0\n  # The krm-catalog releases that read this catalog (a semver range).\n  \
         requires:\n    krmCatalog: \">={}\"\n",
        crate::catalog::requires::VERSION
    )
}

fn service_yaml(catalog: &str, id: &str) -> String {
    let kind = crate::gvk::pascal_case(id);
    SERVICE
        .replace("{catalog}", catalog)
        .replace("{id}", id)
        .replace("{kind}", &kind)
}

const SERVICE: &str = r"# A service of the {catalog} catalog. Users turn it on in a ServiceSet
# (spec.services.{id}) or write one object of its kind:
#
#   apiVersion: services.krm-catalog.dev/v1alpha1
#   kind: {kind}
#   metadata: {name: web, namespace: shop}
#   spec: {config: {replicas: 2}}
apiVersion: kubara.io/v1alpha1
kind: ServiceDefinition
metadata:
  name: {id}
spec:
  # Its templates: every *.j2 under charts/{id}/.
  chartPath: {id}
  # enabled: a ServiceSet renders it unless it says `status: disabled`.
  status: enabled
  # The config: a CRD openAPIV3Schema, defaulted and validated as an apiserver does it.
  # `krm-catalog explain {kind}.spec.config --recursive --catalog .` shows it.
  configSchema:
    type: object
    # CEL rules over the whole config, worded as the apiserver words them.
    x-kubernetes-validations:
    - rule: self.tier != 'dev' || self.replicas <= 1
      message: a dev tier runs one replica
      fieldPath: .replicas
    properties:
      image:
        type: string
        description: The container image.
        default: nginxinc/nginx-unprivileged:1.27
      replicas:
        type: integer
        description: How many pods run.
        default: 1
        minimum: 0
        maximum: 10
      tier:
        type: string
        description: Where it runs.
        enum: [dev, prod]
        default: prod
  # Configs that must validate and render: `catalog lint` checks each.
  examples:
  - name: production
    config:
      tier: prod
      replicas: 3
";

const TEMPLATE: &str = r"{#- Rendered for every instance. The context: instance (its object's name and
    metadata), service, config (defaulted and validated), cluster, catalog; see
    docs/reference/templates.md. -#}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ instance.name }}
  labels:
    app.kubernetes.io/name: {{ service.id }}
    tier: {{ config.tier }}
spec:
  replicas: {{ config.replicas }}
  selector:
    matchLabels:
      app.kubernetes.io/instance: {{ instance.name }}
  template:
    metadata:
      labels:
        app.kubernetes.io/instance: {{ instance.name }}
    spec:
      containers:
      - name: app
        image: {{ config.image | tojson }}
        ports:
        - containerPort: 8080
";
