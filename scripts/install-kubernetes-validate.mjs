#!/usr/bin/env node
// Installs PyPI's kubernetes-validate, which carries the Kubernetes API's JSON schemas for every
// release, into a virtual environment of its own in .tools/kubernetes-validate/<version>/, and
// prints the path of its Python: the chart's test (test/unit/helm-chart.test.ts) validates what
// `helm template` renders with it, offline. The tests' global setup (test/support/test-servers.ts)
// runs it before any test starts. Needs python3 with its venv module (Debian: apt-get install
// python3-venv). `--missing` prints (as JSON) what an install would lack, installing nothing;
// `--find` prints the Python's path when it is installed, and nothing when it is not.
import { isMain, pythonVenv } from './python-venv.mjs';

export const KUBERNETES_VALIDATE_VERSION = '1.37.0';
const venv = pythonVenv({
  name: 'kubernetes-validate',
  version: KUBERNETES_VALIDATE_VERSION,
  requirement: `kubernetes-validate==${KUBERNETES_VALIDATE_VERSION}`,
  takes: 'a minute or two',
  probe: ['-m', 'kubernetes_validate', '--version'],
});
/** Runs the validator as `<python> -m kubernetes_validate`, wherever the environment was renamed to. */
export const KUBERNETES_VALIDATE_PYTHON = venv.python;
export const { isInstalled, missingForInstall } = venv;

/** The Python's path, installing first when it is not there yet (about 150 MB, mostly schemas). */
export const installKubernetesValidate = ({ log } = {}) => venv.install({ log });

if (isMain(import.meta.url)) await venv.main();
