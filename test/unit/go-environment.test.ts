import { goEnvironment } from '../../src/temporal-server/temporal-cli';

test("go install, which builds the Temporal CLI, sees Go's and the network's settings but none of the worker's secrets", () => {
  expect(
    goEnvironment({
      PATH: '/usr/bin',
      HOME: '/root',
      GOPROXY: 'https://proxy.example',
      GOFLAGS: '-mod=mod',
      CGO_ENABLED: '0',
      HTTPS_PROXY: 'http://proxy:3128',
      no_proxy: 'localhost',
      SSL_CERT_FILE: '/etc/ssl/cert.pem',
      OPENAI_API_KEY: 'sk-secret',
      AWS_SECRET_ACCESS_KEY: 'aws-secret',
      DURABLE_AGENT_RAP_SECRET: 'rap-secret',
      TEMPORAL_API_KEY: 'temporal-secret',
    }),
  ).toEqual({
    PATH: '/usr/bin',
    HOME: '/root',
    GOPROXY: 'https://proxy.example',
    GOFLAGS: '-mod=mod',
    CGO_ENABLED: '0',
    HTTPS_PROXY: 'http://proxy:3128',
    no_proxy: 'localhost',
    SSL_CERT_FILE: '/etc/ssl/cert.pem',
  });
});
