import { codecServerEnvironment } from '../../src/cli/embedded-codec-server';

test('the codec server gets the blob store and codec settings, never the worker’s other secrets', () => {
  const env = codecServerEnvironment(
    {
      PATH: '/usr/bin',
      HOME: '/home/a',
      OPENAI_API_KEY: 'sk-secret',
      DURABLE_AGENT_RAP_SECRET: 'rap-secret',
      DURABLE_AGENT_GATEWAY_SIGNING_KEY: 'key',
      TEMPORAL_API_KEY: 'temporal-secret',
      DURABLE_AGENT_DATA_DIR: '/data',
      DURABLE_AGENT_BLOB_STORE: 's3',
      DURABLE_AGENT_BLOB_S3_BUCKET: 'b',
      AWS_SECRET_ACCESS_KEY: 'aws',
      DURABLE_AGENT_MAX_PAYLOAD_BYTES: '4096',
      DURABLE_AGENT_CODEC_ORIGINS: 'http://ui',
    },
    { uiPort: 8300 },
  );
  expect(env).toEqual({
    PATH: '/usr/bin',
    HOME: '/home/a',
    DURABLE_AGENT_DATA_DIR: '/data',
    DURABLE_AGENT_BLOB_STORE: 's3',
    DURABLE_AGENT_BLOB_S3_BUCKET: 'b',
    AWS_SECRET_ACCESS_KEY: 'aws',
    DURABLE_AGENT_MAX_PAYLOAD_BYTES: '4096',
    DURABLE_AGENT_CODEC_ORIGINS: 'http://ui',
    DURABLE_AGENT_UI_PORT: '8300',
  });
});
