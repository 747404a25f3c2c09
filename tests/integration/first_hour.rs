//! Issue 22, "The first hour": traps where the tool said yes and was wrong.

use crate::util::{TestContext, stderr, stdout};

/// Two services, one invalid (`replicas: -1`), and a plain object of the package.
const HALF_VALID: &str = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
---
apiVersion: services.krm-catalog.dev/v1alpha1
kind: MetricsServer
metadata:
  name: metrics
---
apiVersion: services.krm-catalog.dev/v1alpha1
kind: ExternalSecrets
metadata:
  name: eso
spec:
  config:
    replicas: -1
";

/// Standalone `render` exited 1 but wrote the valid half of the package to stdout, where a
/// pipeline (`render > out.yaml`, `| kubectl apply -f -`) takes it; it writes nothing now.
/// Function mode still writes the ResourceList with its results, as kpt expects.
#[test]
fn issue16_render_writes_nothing_to_stdout_on_error() {
    let ctx = TestContext::new();
    ctx.write("services.yaml", HALF_VALID);
    let out = ctx.run(&["render", "-f", "services.yaml"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        out.stdout.is_empty(),
        "render wrote to stdout on error:\n{}",
        stdout(&out)
    );
    assert!(
        stderr(&out).contains(
            "[error] services.krm-catalog.dev/v1alpha1/ExternalSecrets/eso spec.config.replicas: Invalid value: -1: must be greater than or equal to 1 (services.yaml#2)"
        ),
        "{}",
        stderr(&out)
    );

    // The same items as a ResourceList on stdin (function mode): the list and its results.
    let list = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{}",
        HALF_VALID
            .split("---\n")
            .map(|doc| {
                let mut lines = doc.lines();
                let first = lines.next().unwrap_or_default();
                let rest: String = lines.map(|l| format!("  {l}\n")).collect();
                format!("- {first}\n{rest}")
            })
            .collect::<String>()
    );
    let out = ctx.run(&[], &list);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"), "{text}");
    assert!(text.contains("results:\n- message: \"Invalid value: -1"), "{text}");
}
