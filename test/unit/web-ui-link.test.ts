import { webUiLink } from '../../src/cli/terminal/web-ui-link';
import { connectionSettingsFromEnv } from '../../src/client/connection-settings-from-env';

test('the embedded server links to its own UI; a deployment to the UI it names; an unknown server to none', () => {
  expect(webUiLink(connectionSettingsFromEnv({}), 'conv 1', {})).toBe(
    'http://127.0.0.1:8233/namespaces/default/workflows/conv%201',
  );
  expect(webUiLink(connectionSettingsFromEnv({}), 'c', { DURABLE_AGENT_UI_PORT: '9000' })).toBe(
    'http://127.0.0.1:9000/namespaces/default/workflows/c',
  );
  const remote = connectionSettingsFromEnv({
    TEMPORAL_ADDRESS: 'temporal:7233',
    TEMPORAL_NAMESPACE: 'agents',
  });
  expect(webUiLink(remote, 'c', {})).toBeUndefined();
  expect(webUiLink(remote, 'c', { DURABLE_AGENT_WEB_UI_URL: 'https://ui.example.com/' })).toBe(
    'https://ui.example.com/namespaces/agents/workflows/c',
  );
});
