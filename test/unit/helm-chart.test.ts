import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { inCi } from '../support/in-ci';

/**
 * The Helm chart (deploy/helm/durable-agent), linted strictly, rendered with each values file it
 * documents and validated offline against the Kubernetes API's schemas, then read for what a
 * cluster relies on. Helm and kubernetes-validate are made ready by the tests' global setup
 * (scripts/build-helm.mjs, scripts/install-kubernetes-validate.mjs).
 */

const ROOT = path.resolve(__dirname, '..', '..');
const CHART = path.join(ROOT, 'deploy', 'helm', 'durable-agent');
const VALUES_FILES = ['values-temporal-cloud.yaml', 'ci/self-hosted-values.yaml', 'ci/plain-values.yaml'];
/** The oldest release the chart supports (its kubeVersion) and the newest the schemas know. */
const KUBERNETES_VERSIONS = ['1.30.0', '1.37.0'];
/** The Prometheus Operator's kind: a CRD, whose schema is the operator's, not the API's. */
const CUSTOM_KINDS = ['ServiceMonitor'];

function found(script: string): string | undefined {
  const result = spawnSync(process.execPath, [path.join(ROOT, 'scripts', script), '--find'], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  return result.stdout.trim() || undefined;
}

const helm = found('build-helm.mjs');
const python = found('install-kubernetes-validate.mjs');
const missing = [
  ...(helm ? [] : ['Helm (built by the global setup from the Go module proxy; needs Go)']),
  ...(python
    ? []
    : ['kubernetes-validate (installed by the global setup from PyPI; needs python3 with venv)']),
];
const scratch = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-chart-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Helm with homes of its own, so nothing of the user's Helm configuration or cache is read. */
function runHelm(args: string[]) {
  const result = spawnSync(helm!, args, {
    encoding: 'utf8',
    timeout: 60_000,
    env: {
      PATH: process.env.PATH,
      HELM_CACHE_HOME: path.join(scratch, 'cache'),
      HELM_CONFIG_HOME: path.join(scratch, 'config'),
      HELM_DATA_HOME: path.join(scratch, 'data'),
    },
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}`, stdout: result.stdout };
}

/** Rendered YAML read as plain data: each assertion checks the shape it relies on. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Rendered = any;
type Manifest = {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: Rendered;
  [key: string]: Rendered;
};

function template(valuesFile: string | undefined, sets: string[] = []) {
  return runHelm([
    'template',
    'agents',
    CHART,
    '--kube-version',
    KUBERNETES_VERSIONS[0]!,
    ...(valuesFile ? ['--values', path.join(CHART, valuesFile)] : []),
    ...sets.flatMap((set) => ['--set', set]),
  ]);
}

function render(valuesFile: string, sets: string[] = []): Manifest[] {
  const result = template(valuesFile, sets);
  if (result.status !== 0) throw new Error(`helm template with ${valuesFile} failed:\n${result.output}`);
  return parseAllDocuments(result.stdout)
    .map((document) => document.toJS() as Manifest | null)
    .filter((manifest): manifest is Manifest => manifest !== null);
}

function the(manifests: Manifest[], kind: string, suffix: string): Manifest {
  const match = manifests.find(
    (manifest) => manifest.kind === kind && manifest.metadata.name.endsWith(suffix),
  );
  if (!match) throw new Error(`no ${kind} named …${suffix} among ${manifests.map((m) => m.kind).join(', ')}`);
  return match;
}

const podOf = (deployment: Manifest) => deployment.spec.template.spec;
const containerOf = (deployment: Manifest) => podOf(deployment).containers[0];
const envOf = (deployment: Manifest): Array<{ name: string; value?: string; valueFrom?: Rendered }> =>
  containerOf(deployment).env;
const envValue = (deployment: Manifest, name: string) =>
  envOf(deployment).find((entry) => entry.name === name)?.value;
const portNamed = (deployment: Manifest, name: string): number =>
  containerOf(deployment).ports.find((port: { name: string }) => port.name === name).containerPort;

const describeWithTools = missing.length > 0 && !inCi() ? describe.skip : describe;
if (missing.length > 0 && !inCi()) console.warn(`skipping the chart's test: no ${missing.join(', no ')}`);

describeWithTools('the Helm chart', () => {
  beforeAll(() => {
    if (missing.length > 0) throw new Error(`the chart's test needs ${missing.join(' and ')}`);
  });

  test.each(VALUES_FILES)(
    '%s lints strictly, renders and validates against the Kubernetes schemas',
    (valuesFile) => {
      const lint = runHelm(['lint', '--strict', CHART, '--values', path.join(CHART, valuesFile)]);
      expect({ status: lint.status, output: lint.output }).toMatchObject({ status: 0 });
      const rendered = template(valuesFile);
      expect(rendered.status).toBe(0);
      const file = path.join(scratch, `${path.basename(valuesFile, '.yaml')}.rendered.yaml`);
      writeFileSync(file, rendered.stdout);
      const validation = spawnSync(
        python!,
        [
          '-m',
          'kubernetes_validate',
          '--strict',
          ...KUBERNETES_VERSIONS.flatMap((version) => ['-k', version]),
          file,
        ],
        { encoding: 'utf8', timeout: 60_000 },
      );
      const output = `${validation.stdout}${validation.stderr}`;
      expect({ status: validation.status, output }).toMatchObject({ status: 0 });
      // Every object was checked: the only ones without a schema are the custom kinds.
      const unchecked = output.split('\n').filter((line) => line.startsWith('WARN'));
      for (const line of unchecked)
        expect(CUSTOM_KINDS.some((kind) => line.includes(`kind ${kind} `))).toBe(true);
      const passed = output.split('\n').filter((line) => line.includes(' passed for resource '));
      const objects = render(valuesFile).filter((manifest) => !CUSTOM_KINDS.includes(manifest.kind));
      expect(passed).toHaveLength(objects.length * KUBERNETES_VERSIONS.length);
    },
  );

  test('a worker is ready only while it polls, replaced before it stops, and given longer than its drain', () => {
    for (const valuesFile of VALUES_FILES) {
      const worker = the(render(valuesFile), 'Deployment', '-worker');
      const container = containerOf(worker);
      expect(container.readinessProbe.httpGet).toEqual({ path: '/ready', port: 'health' });
      expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'health' });
      expect(String(portNamed(worker, 'health'))).toBe(envValue(worker, 'DURABLE_AGENT_HEALTH_PORT'));
      // The kubelet probes from the node: loopback would never answer it.
      expect(envValue(worker, 'DURABLE_AGENT_HEALTH_HOST')).toBe('0.0.0.0');
      expect(worker.spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
      const drainMs = Number(envValue(worker, 'AGENT_SHUTDOWN_GRACE_MS'));
      expect(drainMs).toBeGreaterThanOrEqual(300_000);
      expect(podOf(worker).terminationGracePeriodSeconds * 1000).toBeGreaterThan(drainMs);
    }
  });

  test("a worker's push endpoint listens on the pod's address and names it, so the gateway streams its text", () => {
    const worker = the(render('values-temporal-cloud.yaml'), 'Deployment', '-worker');
    const port = portNamed(worker, 'live');
    expect(envValue(worker, 'AGENT_LIVE_ENDPOINT')).toBe(`0.0.0.0:${port}`);
    expect(envValue(worker, 'AGENT_LIVE_URL')).toBe(`https://$(POD_IP):${port}`);
    // Kubernetes expands $(POD_IP) only from a variable defined before the one that uses it.
    const names = envOf(worker).map((entry) => entry.name);
    expect(names.indexOf('POD_IP')).toBeGreaterThanOrEqual(0);
    expect(names.indexOf('POD_IP')).toBeLessThan(names.indexOf('AGENT_LIVE_URL'));
    expect(envOf(worker).find((entry) => entry.name === 'POD_IP')?.valueFrom).toEqual({
      fieldRef: { fieldPath: 'status.podIP' },
    });

    const off = the(
      render('values-temporal-cloud.yaml', ['worker.live.enabled=false']),
      'Deployment',
      '-worker',
    );
    expect(envValue(off, 'AGENT_LIVE_ENDPOINT')).toBe('off');
    expect(envValue(off, 'AGENT_LIVE_URL')).toBeUndefined();
  });

  test('a sandboxed worker gets what bubblewrap needs; every other pod keeps the restricted profile', () => {
    const sandboxed = the(render('ci/self-hosted-values.yaml'), 'Deployment', '-worker');
    expect(envValue(sandboxed, 'AGENT_EXEC_SECURITY')).toBe('sandbox');
    expect(podOf(sandboxed).securityContext).toMatchObject({
      seccompProfile: { type: 'Unconfined' },
      appArmorProfile: { type: 'Unconfined' },
    });
    expect(podOf(sandboxed).hostUsers).toBe(false);
    expect(containerOf(sandboxed).securityContext.procMount).toBe('Unmasked');

    const plain = the(render('ci/plain-values.yaml'), 'Deployment', '-worker');
    expect(envValue(plain, 'AGENT_EXEC_SECURITY')).toBe('safe-bin');
    expect(podOf(plain).securityContext.seccompProfile).toEqual({ type: 'RuntimeDefault' });
    expect(podOf(plain).securityContext.appArmorProfile).toBeUndefined();
    expect(podOf(plain).hostUsers).toBeUndefined();
    expect(containerOf(plain).securityContext.procMount).toBeUndefined();

    const gateway = the(render('ci/self-hosted-values.yaml'), 'Deployment', '-gateway');
    expect(podOf(gateway).securityContext.seccompProfile).toEqual({ type: 'RuntimeDefault' });
    for (const deployment of [sandboxed, plain, gateway]) {
      // A command a conversation runs finds no Kubernetes API token, and nothing raises privileges.
      expect(podOf(deployment).automountServiceAccountToken).toBe(false);
      expect(containerOf(deployment).securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        capabilities: { drop: ['ALL'] },
      });
    }
  });

  test('secrets reach the pods only by reference, and only the pods that use them', () => {
    const manifests = render('values-temporal-cloud.yaml');
    const worker = the(manifests, 'Deployment', '-worker');
    const gateway = the(manifests, 'Deployment', '-gateway');
    for (const deployment of [worker, gateway]) {
      expect(envOf(deployment).find((entry) => entry.name === 'TEMPORAL_API_KEY')).toEqual({
        name: 'TEMPORAL_API_KEY',
        valueFrom: { secretKeyRef: { name: 'temporal-cloud', key: 'TEMPORAL_API_KEY' } },
      });
      expect(envValue(deployment, 'TEMPORAL_ADDRESS')).toBe('my-namespace.a1b2c.tmprl.cloud:7233');
      expect(envValue(deployment, 'TEMPORAL_NAMESPACE')).toBe('my-namespace.a1b2c');
      expect(containerOf(deployment).envFrom).toContainEqual({ secretRef: { name: 'blob-store' } });
    }
    // The model's keys are the workers' alone.
    expect(containerOf(worker).envFrom).toContainEqual({ secretRef: { name: 'model-keys' } });
    expect(containerOf(gateway).envFrom).not.toContainEqual({ secretRef: { name: 'model-keys' } });
    expect(podOf(gateway).volumes).toContainEqual({
      name: 'tokens',
      secret: { secretName: 'gateway-tokens' },
    });
    expect(containerOf(gateway).args).toEqual(
      expect.arrayContaining(['--tokens', '/etc/durable-agent/tokens/tokens.json']),
    );

    // A client profile from a Secret, mounted where TEMPORAL_CONFIG_FILE says.
    const selfHosted = the(render('ci/self-hosted-values.yaml'), 'Deployment', '-worker');
    expect(envValue(selfHosted, 'TEMPORAL_CONFIG_FILE')).toBe('/etc/temporal/temporal.toml');
    expect(envValue(selfHosted, 'TEMPORAL_PROFILE')).toBe('prod');
    expect(containerOf(selfHosted).volumeMounts).toContainEqual({
      name: 'temporal-config',
      mountPath: '/etc/temporal',
      readOnly: true,
    });
    expect(envValue(selfHosted, 'DURABLE_AGENT_APPROVER_KEYS')).toBe(
      '/etc/durable-agent/approver-keys/approver-keys.json',
    );
  });

  test('the gateway listens for the cluster, is probed on /healthz and served on its port', () => {
    const manifests = render('values-temporal-cloud.yaml');
    const gateway = the(manifests, 'Deployment', '-gateway');
    const container = containerOf(gateway);
    expect(container.args).toEqual(expect.arrayContaining(['--host', '0.0.0.0']));
    for (const probe of ['readinessProbe', 'livenessProbe', 'startupProbe']) {
      expect(container[probe].httpGet).toEqual({ path: '/healthz', port: 'http' });
    }
    const service = the(manifests, 'Service', '-gateway');
    expect(service.spec.ports).toEqual([{ name: 'http', port: 8787, targetPort: 'http' }]);
    expect(service.spec.selector).toEqual(gateway.spec.selector.matchLabels);
    expect(gateway.spec.selector.matchLabels).not.toEqual(
      the(manifests, 'Deployment', '-worker').spec.selector.matchLabels,
    );
  });

  test("the workers' metrics are scraped through pod annotations or a ServiceMonitor", () => {
    const cloud = the(render('values-temporal-cloud.yaml'), 'Deployment', '-worker');
    expect(cloud.spec.template.metadata.annotations).toMatchObject({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': String(portNamed(cloud, 'metrics')),
    });
    expect(envValue(cloud, 'DURABLE_AGENT_METRICS_PORT')).toBe(String(portNamed(cloud, 'metrics')));
    expect(envValue(cloud, 'DURABLE_AGENT_METRICS_HOST')).toBe('0.0.0.0');

    const manifests = render('ci/self-hosted-values.yaml');
    const monitor = the(manifests, 'ServiceMonitor', '-worker');
    const service = the(manifests, 'Service', '-worker-metrics');
    expect(service.metadata.labels).toMatchObject(monitor.spec.selector.matchLabels);
    expect(service.spec.selector).toEqual(the(manifests, 'Deployment', '-worker').spec.selector.matchLabels);
    expect(monitor.spec.endpoints).toEqual([expect.objectContaining({ port: 'metrics', path: '/metrics' })]);
    expect(monitor.metadata.labels).toMatchObject({ release: 'prometheus' });

    const plain = render('ci/plain-values.yaml');
    expect(the(plain, 'Deployment', '-worker').spec.template.metadata.annotations).toBeUndefined();
    expect(plain.map((manifest) => manifest.kind)).not.toContain('ServiceMonitor');
  });

  test("with network policies, a worker's push endpoint is reachable from the release's pods alone", () => {
    const manifests = render('ci/self-hosted-values.yaml');
    const worker = the(manifests, 'NetworkPolicy', '-worker');
    expect(worker.spec.podSelector).toEqual(the(manifests, 'Deployment', '-worker').spec.selector);
    expect(worker.spec.ingress).toEqual([
      {
        from: [
          {
            podSelector: {
              matchLabels: {
                'app.kubernetes.io/name': 'durable-agent',
                'app.kubernetes.io/instance': 'agents',
              },
            },
          },
        ],
        ports: [{ port: 'live' }],
      },
      {
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
        ports: [{ port: 'metrics' }],
      },
    ]);
    const gateway = the(manifests, 'NetworkPolicy', '-gateway');
    expect(gateway.spec.podSelector).toEqual(the(manifests, 'Deployment', '-gateway').spec.selector);
    expect(gateway.spec.ingress).toEqual([
      {
        ports: [{ port: 'http' }],
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } }],
      },
    ]);
    expect(render('ci/plain-values.yaml').map((manifest) => manifest.kind)).not.toContain('NetworkPolicy');
  });

  test.each([
    [
      'no Temporal address',
      ['temporal.address=', 'temporal.config.secretName='],
      'temporal.address is required',
    ],
    ['an S3 store without a bucket', ['blobStore.s3.bucket='], 'blobStore.s3.bucket is required'],
    [
      "a directory store on a pod's own disk",
      ['blobStore.type=directory', 'blobStore.directory.existingClaim='],
      'blobStore.directory.existingClaim is required',
    ],
    ['the gateway without tokens', ['gateway.tokens.secretName='], 'gateway.tokens.secretName is required'],
    // values.schema.json: a misspelt key or an unknown mode is refused, never ignored.
    ['a misspelt value', ['worker.replica=3'], "additional properties 'replica' not allowed"],
    [
      'an unknown blob store',
      ['blobStore.type=memory'],
      "value must be one of 's3', 'postgres', 'directory'",
    ],
    [
      'an exec mode the worker does not know',
      ['worker.execSecurity=sandbx'],
      "value must be one of 'sandbox', 'safe-bin', 'full'",
    ],
  ])('the chart refuses %s, saying what to set', (_case, sets, message) => {
    const result = template('values-temporal-cloud.yaml', sets);
    expect(result.status).not.toBe(0);
    expect(result.output).toContain(message);
  });
});
