#!/bin/sh
# The job the workflows in README.md run, runnable from a checkout: lint the catalog, render
# the cluster's services, and fail when the committed manifests drifted from what the catalog
# renders. KRM_CATALOG names the binary (default: krm-catalog on PATH).
set -eu
cd "$(dirname "$0")"
krm_catalog=${KRM_CATALOG:-krm-catalog}
"$krm_catalog" catalog lint ../../../catalogs/builtin
new=$(mktemp)
trap 'rm -f "$new"' EXIT
"$krm_catalog" render -f ../kpt-eval/services.yaml > "$new"
if [ "${UPDATE_GOLDEN:-}" ]; then cp "$new" rendered/hub.yaml; fi
diff -u rendered/hub.yaml "$new"
echo "rendered/hub.yaml is up to date"
