import { localToolsFromEnv } from '../../src/worker/local-tools-settings';

test('AGENT_LOCAL_TOOLS is on unless set off, and anything else stops the worker', () => {
  expect(localToolsFromEnv({})).toBe(true);
  expect(localToolsFromEnv({ AGENT_LOCAL_TOOLS: 'on' })).toBe(true);
  expect(localToolsFromEnv({ AGENT_LOCAL_TOOLS: ' OFF ' })).toBe(false);
  expect(() => localToolsFromEnv({ AGENT_LOCAL_TOOLS: 'no' })).toThrow(
    /AGENT_LOCAL_TOOLS must be on or off, not "no"/,
  );
});
