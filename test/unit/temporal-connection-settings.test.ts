import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connectionSettingsFromEnv } from '../../src/client/connection-settings-from-env';
import { temporalConnectionOptions } from '../../src/client/temporal-connection-options';

let dir: string;
let configFile: string;
const pem = (name: string) => path.join(dir, name);

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-profiles-'));
  for (const name of ['ca.pem', 'client.pem', 'client.key', 'old-ca.pem'])
    writeFileSync(pem(name), `-----BEGIN ${name}-----\n`);
  configFile = pem('temporal.toml');
  writeFileSync(
    configFile,
    `[profile.default]
address = "localhost:7233"

[profile.cluster]
address = "10.0.0.5:7233"
namespace = "agents"

[profile.cluster.tls]
server_name = "temporal.internal"
server_ca_cert_path = "${pem('ca.pem')}"
client_cert_path = "${pem('client.pem')}"
client_key_path = "${pem('client.key')}"

[profile.cloud]
address = "agents.a1b2c.tmprl.cloud:7233"
namespace = "agents.a1b2c"
api_key = "key-from-file"
`,
  );
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const quiet = () => undefined;

describe('a profile of the client configuration file', () => {
  test('TEMPORAL_PROFILE chooses one of the profiles; without it the file is read for `default`', () => {
    const cluster = connectionSettingsFromEnv(
      { TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'cluster' },
      quiet,
    );
    expect(cluster).toMatchObject({
      address: '10.0.0.5:7233',
      namespace: 'agents',
      source: `profile 'cluster' of ${configFile}`,
      tls: { serverName: 'temporal.internal' },
    });
    expect(temporalConnectionOptions(cluster)).toEqual({
      tls: {
        serverNameOverride: 'temporal.internal',
        serverRootCACertificate: Buffer.from('-----BEGIN ca.pem-----\n'),
        clientCertPair: {
          crt: Buffer.from('-----BEGIN client.pem-----\n'),
          key: Buffer.from('-----BEGIN client.key-----\n'),
        },
      },
    });
    const plain = connectionSettingsFromEnv({ TEMPORAL_CONFIG_FILE: configFile }, quiet);
    expect(plain).toMatchObject({ address: 'localhost:7233', namespace: 'default' });
    expect(temporalConnectionOptions(plain)).toEqual({ tls: false });
  });

  test('the standard variables win over the file', () => {
    const settings = connectionSettingsFromEnv(
      {
        TEMPORAL_CONFIG_FILE: configFile,
        TEMPORAL_PROFILE: 'cluster',
        TEMPORAL_ADDRESS: '10.0.0.6:7233',
        TEMPORAL_NAMESPACE: 'other',
        TEMPORAL_TLS_SERVER_NAME: 'frontend.internal',
      },
      quiet,
    );
    expect(settings).toMatchObject({
      address: '10.0.0.6:7233',
      namespace: 'other',
      tls: { serverName: 'frontend.internal', clientCert: { path: pem('client.pem') } },
    });
  });

  test('an API key turns TLS on; TEMPORAL_TLS=false turns it off again', () => {
    const cloud = connectionSettingsFromEnv(
      { TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'cloud' },
      quiet,
    );
    expect(temporalConnectionOptions(cloud)).toEqual({ tls: {}, apiKey: 'key-from-file' });
    const fromEnv = connectionSettingsFromEnv(
      { TEMPORAL_ADDRESS: 'h:7233', TEMPORAL_API_KEY: 'env-key' },
      quiet,
    );
    expect(temporalConnectionOptions(fromEnv)).toEqual({ tls: {}, apiKey: 'env-key' });
    const off = connectionSettingsFromEnv({ TEMPORAL_API_KEY: 'env-key', TEMPORAL_TLS: 'false' }, quiet);
    expect(temporalConnectionOptions(off)).toEqual({ tls: false, apiKey: 'env-key' });
  });

  test('~/.config/temporalio/temporal.toml is the file when TEMPORAL_CONFIG_FILE is unset', () => {
    const home = path.join(dir, 'home');
    mkdirSync(path.join(home, '.config', 'temporalio'), { recursive: true });
    writeFileSync(
      path.join(home, '.config', 'temporalio', 'temporal.toml'),
      '[profile.default]\nnamespace = "mine"\n',
    );
    expect(connectionSettingsFromEnv({ HOME: home }, quiet).namespace).toBe('mine');
    // Without any file or variable: the embedded server, namespace `default`.
    expect(connectionSettingsFromEnv({ HOME: path.join(dir, 'nobody') }, quiet)).toMatchObject({
      namespace: 'default',
      source: 'the environment',
    });
    expect(connectionSettingsFromEnv({}, quiet).address).toBeUndefined();
  });

  test('an empty variable counts as unset, as a compose file writes one', () => {
    expect(connectionSettingsFromEnv({ TEMPORAL_ADDRESS: '', TEMPORAL_NAMESPACE: '' }, quiet)).toMatchObject({
      namespace: 'default',
    });
    expect(connectionSettingsFromEnv({ TEMPORAL_ADDRESS: '' }, quiet).address).toBeUndefined();
  });
});

describe('what is refused, saying why', () => {
  test.each([
    [
      { TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml' },
      /temporal\.toml \(TEMPORAL_CONFIG_FILE, --config-file\) does not exist/,
    ],
    [
      { TEMPORAL_PROFILE: 'cluster' },
      /names profile 'cluster', but there is no Temporal client configuration file/,
    ],
    [{ TEMPORAL_TLS: 'maybe' }, /TEMPORAL_TLS takes true or false, got maybe/],
  ])('%j', (env, message) => {
    expect(() => connectionSettingsFromEnv(env, quiet)).toThrow(message);
  });

  test('a profile the file does not have is named with those it has', () => {
    expect(() =>
      connectionSettingsFromEnv({ TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'prod' }, quiet),
    ).toThrow(
      `profile 'prod' (TEMPORAL_PROFILE, --profile) is not in ${configFile}, which has 'default', 'cluster', 'cloud'`,
    );
  });

  test('a file that is not TOML is named', () => {
    const broken = pem('broken.toml');
    writeFileSync(broken, '[profile.default\naddress = 1\n');
    expect(() => connectionSettingsFromEnv({ TEMPORAL_CONFIG_FILE: broken }, quiet)).toThrow(`${broken}: `);
  });

  test('a client certificate without its key, or a key without its certificate', () => {
    const certOnly = connectionSettingsFromEnv({ TEMPORAL_TLS_CLIENT_CERT_PATH: pem('client.pem') }, quiet);
    expect(() => temporalConnectionOptions(certOnly)).toThrow(/the TLS client certificate needs its key/);
    const keyOnly = connectionSettingsFromEnv({ TEMPORAL_TLS_CLIENT_KEY_PATH: pem('client.key') }, quiet);
    expect(() => temporalConnectionOptions(keyOnly)).toThrow(/the TLS client key needs its certificate/);
  });

  test('a certificate file that is missing is named', () => {
    const settings = connectionSettingsFromEnv(
      { TEMPORAL_TLS_SERVER_CA_CERT_PATH: pem('absent.pem') },
      quiet,
    );
    expect(() => temporalConnectionOptions(settings)).toThrow(
      `cannot read the CA for the server's certificate ${pem('absent.pem')}: no such file`,
    );
  });
});

describe("durable-agent's old names", () => {
  test('TEMPORAL_TLS_CERT, TEMPORAL_TLS_KEY and TEMPORAL_TLS_CA still work, each saying once which standard name to use', () => {
    const warn = jest.fn();
    const env = {
      TEMPORAL_ADDRESS: 'h:7233',
      TEMPORAL_TLS_CERT: pem('client.pem'),
      TEMPORAL_TLS_KEY: pem('client.key'),
      TEMPORAL_TLS_CA: pem('ca.pem'),
    };
    const settings = connectionSettingsFromEnv(env, warn);
    expect(temporalConnectionOptions(settings)).toEqual({
      tls: {
        serverRootCACertificate: Buffer.from('-----BEGIN ca.pem-----\n'),
        clientCertPair: {
          crt: Buffer.from('-----BEGIN client.pem-----\n'),
          key: Buffer.from('-----BEGIN client.key-----\n'),
        },
      },
    });
    expect(warn.mock.calls.map(([line]) => line)).toEqual([
      "TEMPORAL_TLS_CERT is deprecated: use TEMPORAL_TLS_CLIENT_CERT_PATH, Temporal's standard name (read for now)",
      "TEMPORAL_TLS_KEY is deprecated: use TEMPORAL_TLS_CLIENT_KEY_PATH, Temporal's standard name (read for now)",
      "TEMPORAL_TLS_CA is deprecated: use TEMPORAL_TLS_SERVER_CA_CERT_PATH, Temporal's standard name (read for now)",
    ]);
    // Read again (a command connects a worker and a client), it says nothing more.
    connectionSettingsFromEnv(env, warn);
    expect(warn).toHaveBeenCalledTimes(3);
  });

  test('the standard name wins when both are set, and the old one is said to be ignored', () => {
    const warn = jest.fn();
    const settings = connectionSettingsFromEnv(
      { TEMPORAL_TLS_CA: pem('old-ca.pem'), TEMPORAL_TLS_SERVER_CA_CERT_PATH: pem('ca.pem') },
      warn,
    );
    expect(settings.tls?.serverCACert).toEqual({ path: pem('ca.pem') });
    expect(warn).toHaveBeenCalledWith(
      'TEMPORAL_TLS_CA is deprecated and ignored: TEMPORAL_TLS_SERVER_CA_CERT_PATH is set',
    );
  });

  test('TEMPORAL_TLS takes yes and no as before, not only true and false', () => {
    expect(temporalConnectionOptions(connectionSettingsFromEnv({ TEMPORAL_TLS: 'yes' }, quiet)).tls).toEqual(
      {},
    );
    expect(temporalConnectionOptions(connectionSettingsFromEnv({ TEMPORAL_TLS: 'TRUE' }, quiet)).tls).toEqual(
      {},
    );
    expect(temporalConnectionOptions(connectionSettingsFromEnv({ TEMPORAL_TLS: 'no' }, quiet)).tls).toBe(
      false,
    );
  });
});
