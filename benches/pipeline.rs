//! Library-level benchmarks of function mode (SPEC §9), next to a bare parse + emit of the
//! same bytes. `bench/run` measures the real binary end to end; this is the quick loop for
//! profiling the pipeline itself: `cargo bench --bench pipeline`.

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use krm_catalog::pipeline::{RunContext, run};
use krm_catalog::resource_list::{read, write};
use krm_catalog::yaml::{emit, parse};

const HEADER: &str = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n";

/// `n` ConfigMaps and Deployments as kpt sends them (its annotations, compact sequences, a
/// block scalar each): the same shape as `bench/run` generates.
fn pass_through(n: usize) -> String {
    let mut out = String::from(HEADER);
    for i in 0..n {
        let name = format!("app-{i:06}");
        let ns = format!("team-{:02}", i % 97);
        let (path, index, id) = (format!("f{:04}.yaml", i / 100), i % 100, i + 1);
        let (api_version, kind, suffix) = if i % 2 == 0 {
            ("v1", "ConfigMap", "-config")
        } else {
            ("apps/v1", "Deployment", "")
        };
        let _ = write!(
            out,
            "- apiVersion: {api_version}
  kind: {kind}
  metadata:
    name: {name}{suffix}
    namespace: {ns}
    labels:
      app.kubernetes.io/name: {name}
      app.kubernetes.io/part-of: shop
      environment: production
    annotations:
      team.example.com/owner: platform@example.com
      config.kubernetes.io/index: '{index}'
      config.kubernetes.io/path: '{path}'
      internal.config.kubernetes.io/index: '{index}'
      internal.config.kubernetes.io/path: '{path}'
      internal.config.kubernetes.io/seqindent: 'compact'
      internal.config.kubernetes.io/annotations-migration-resource-id: '{i}'
      internal.config.kubernetes.io/id: '{id}'
      config.k8s.io/id: '{id}'
"
        );
        if i % 2 == 0 {
            let _ = write!(
                out,
                "  data:
    LOG_LEVEL: info
    MAX_CONNECTIONS: \"128\"
    FEATURE_FLAG: 'on'
    application.properties: |
      server.port=8080
      spring.datasource.url=jdbc:postgresql://db-{db}.{ns}.svc:5432/shop
      spring.datasource.username=app_{i}
      management.endpoints.web.exposure.include=health,info,prometheus
      logging.level.root=INFO
",
                db = i % 13
            );
        } else {
            let _ = write!(
                out,
                "  spec:
    replicas: 3
    selector:
      matchLabels:
        app.kubernetes.io/name: {name}
    template:
      metadata:
        labels:
          app.kubernetes.io/name: {name}
      spec:
        containers:
        - name: app
          image: registry.example.com/shop/app:1.{minor}.3
          command:
          - /bin/sh
          - -c
          - |
            exec /app/server \\
              --config /etc/app/config
          env:
          - name: CONFIG_PATH
            value: /etc/app/config
          resources:
            requests: {{cpu: 100m, memory: 128Mi}}
            limits:
              memory: 256Mi
",
                minor = i % 40
            );
        }
    }
    out
}

/// `n` CertManager service objects, each rendering 3 objects with the built-in catalog.
fn instances(n: usize) -> String {
    let mut out = String::from(HEADER);
    for i in 0..n {
        let _ = write!(
            out,
            "- apiVersion: services.krm-catalog.dev/v1alpha1
  kind: CertManager
  metadata:
    name: issuer-{i:04}
    namespace: team-{i:04}
    annotations:
      internal.config.kubernetes.io/path: 'svc/{i}.yaml'
      internal.config.kubernetes.io/index: '0'
  spec:
    config:
      clusterIssuer:
        email: team-{i:04}@example.com
"
        );
    }
    out
}

/// Function mode minus the process: read, run, write.
fn function(text: &str, ctx: &RunContext) -> String {
    let list = read(text).expect("the benchmark input is a ResourceList");
    let outcome = run(list, ctx);
    write(outcome.list, None)
}

fn roundtrip(text: &str) -> String {
    emit(&parse(text).expect("the benchmark input is YAML"))
}

fn bytes(text: &str) -> Throughput {
    Throughput::Bytes(u64::try_from(text.len()).unwrap_or(u64::MAX))
}

fn benches(c: &mut Criterion) {
    let ctx = RunContext::default();

    let items = pass_through(1_000);
    let out = function(&items, &ctx);
    assert_eq!(
        out, items,
        "pass-through must give the input back unchanged"
    );
    let mut group = c.benchmark_group("pass-through 1k");
    group.throughput(bytes(&items));
    group.bench_function("read+run+write", |b| {
        b.iter(|| function(black_box(&items), &ctx));
    });
    group.bench_function("bare parse+emit", |b| {
        b.iter(|| roundtrip(black_box(&items)));
    });
    group.finish();

    let services = instances(100);
    let outcome = run(read(&services).expect("a ResourceList"), &ctx);
    assert!(
        !outcome.results.has_errors(),
        "instances must render without errors"
    );
    assert_eq!(
        outcome.list.items.len(),
        400,
        "100 instances + 3 objects each"
    );
    let mut group = c.benchmark_group("100 CertManager instances");
    group.throughput(bytes(&services));
    group.bench_function("read+run+write", |b| {
        b.iter(|| function(black_box(&services), &ctx));
    });
    group.bench_function("bare parse+emit", |b| {
        b.iter(|| roundtrip(black_box(&services)));
    });
    group.finish();
}

criterion_group! {
    name = pipeline;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(6));
    targets = benches
}
criterion_main!(pipeline);
