import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LiveModelCalls } from '../../src/activities/live-model-calls';
import { LocalCancelRequests } from '../../src/activities/local-cancel-requests';
import { LiveEndpointTrustError, requestLiveEndpoint } from '../../src/client/live-endpoint-request';
import type { ModelTextDelta } from '../../src/client/live-model-text';
import { followRemoteModelText } from '../../src/client/remote-model-text';
import { startLiveEndpoint } from '../../src/worker/live-endpoint';
import { liveEndpointFromEnv, liveTlsOf } from '../../src/worker/live-endpoint-settings';
import {
  announceCancelRequest,
  identityWithLiveEndpoint,
  liveEndpointOfIdentity,
} from '../../src/worker/remote-cancel-announcer';
import { selfSignedCertificate } from '../../src/worker/self-signed-certificate';
import { startRecordingProxy } from '../support/recording-proxy';
import { testCertificates } from '../support/test-certificates';

class HeardCancels extends LocalCancelRequests {
  readonly heard: string[] = [];
  override requested(runId: string): void {
    this.heard.push(runId);
  }
}

/** Counts the requests for a call's text that reached the endpoint. */
class CountedFollows extends LiveModelCalls {
  asked = 0;
  override follow(token: string, listener: (delta: ModelTextDelta | 'end') => void) {
    this.asked++;
    return super.follow(token, listener);
  }
}

async function until(check: () => boolean): Promise<void> {
  for (let tries = 0; !check(); tries++) {
    if (tries > 500) throw new Error('never happened');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const SECRET = 'the launch code is 0000';
const pathOf = (url: string) => new URL(url).pathname;

test('with a certificate it made, the endpoint serves TLS and a watcher holding its pin reads the text; the link carries none of it', async () => {
  const calls = new LiveModelCalls();
  const endpoint = await startLiveEndpoint({
    host: '127.0.0.1',
    port: 0,
    tls: 'self-signed',
    calls,
    cancels: new HeardCancels(),
  });
  const link = await startRecordingProxy(() => Number(new URL(endpoint.url).port));
  try {
    expect(endpoint.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(endpoint.pin).toMatch(/^[0-9a-f]{64}$/);
    const tap = calls.open('conv-a', 'run/1#1');
    expect(tap.pin).toBe(endpoint.pin);
    tap.append(SECRET);
    const seen: ModelTextDelta[] = [];
    const viaLink = { url: `https://127.0.0.1:${link.port}${pathOf(tap.url!)}`, pin: endpoint.pin! };
    const follow = followRemoteModelText(viaLink, 'mine', 'conv-a', (delta) => seen.push(delta));
    await until(() => seen.length === 1);
    tap.append(' and more');
    await until(() => seen.length === 2);
    follow.stop();
    expect(seen.map((delta) => delta.text).join('')).toBe(`${SECRET} and more`);
    const wire = link.recorded();
    // A TLS handshake record (22) opens the connection; neither the text nor the capability is readable.
    expect(wire[0]).toBe(0x16);
    expect(wire.includes(SECRET)).toBe(false);
    expect(wire.includes(pathOf(tap.url!))).toBe(false);
  } finally {
    await link.close();
    await endpoint.close();
  }
});

test('a man in the middle with a certificate of its own: the watcher refuses before its request, and warns', async () => {
  const calls = new CountedFollows();
  const endpoint = await startLiveEndpoint({
    host: '127.0.0.1',
    port: 0,
    tls: 'self-signed',
    calls,
    cancels: new HeardCancels(),
  });
  const middle = await startRecordingProxy(
    () => Number(new URL(endpoint.url).port),
    await selfSignedCertificate('not the worker'),
  );
  try {
    const tap = calls.open('conv-a', 'run/1#1');
    tap.append(SECRET);
    const viaMiddle = { url: `https://127.0.0.1:${middle.port}${pathOf(tap.url!)}`, pin: endpoint.pin! };
    await expect(
      requestLiveEndpoint(viaMiddle, { method: 'GET', signal: AbortSignal.timeout(5_000) }),
    ).rejects.toThrow(LiveEndpointTrustError);
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const seen: ModelTextDelta[] = [];
    followRemoteModelText(viaMiddle, 'mine', 'conv-a', (delta) => seen.push(delta));
    await until(() => warn.mock.calls.length === 1);
    expect(warn.mock.calls[0]![0]).toMatch(/other than the one its worker advertised/);
    expect(warn.mock.calls[0]![1]).toBe('LiveEndpointTrust');
    warn.mockRestore();
    // The middle read nothing (not even the path, the capability) and the worker was never asked.
    expect(middle.recorded().length).toBe(0);
    expect(calls.asked).toBe(0);
    expect(seen).toEqual([]);
  } finally {
    await middle.close();
    await endpoint.close();
  }
});

test('a client before pins (fetch, checking the chain against CAs) is refused by the handshake', async () => {
  const calls = new LiveModelCalls();
  const endpoint = await startLiveEndpoint({
    host: '127.0.0.1',
    port: 0,
    tls: 'self-signed',
    calls,
    cancels: new HeardCancels(),
  });
  try {
    const tap = calls.open('conv-a', 'run/1#1');
    // Such a client reads nothing from the endpoint and goes on with heartbeats, as it always could.
    await expect(fetch(tap.url!)).rejects.toThrow();
  } finally {
    await endpoint.close();
  }
});

test('with a given certificate, a client trusts it through its CA and host name, and refuses it without', async () => {
  const certificates = await testCertificates();
  const calls = new LiveModelCalls();
  const endpoint = await startLiveEndpoint({
    host: '127.0.0.1',
    port: 0,
    tls: { cert: certificates.cert, key: certificates.key },
    calls,
    cancels: new HeardCancels(),
  });
  try {
    expect(endpoint.url).toMatch(/^https:/);
    expect(endpoint.pin).toBeUndefined();
    const tap = calls.open('conv-a', 'run/1#1');
    tap.append(SECRET);
    tap.end();
    const response = await requestLiveEndpoint(
      { url: tap.url! },
      { method: 'GET', signal: AbortSignal.timeout(5_000), ca: certificates.ca },
    );
    let body = '';
    for await (const chunk of response) body += String(chunk);
    expect(body).toContain(SECRET);
    // Node's own store does not know the test CA.
    await expect(
      requestLiveEndpoint({ url: tap.url! }, { method: 'GET', signal: AbortSignal.timeout(5_000) }),
    ).rejects.toThrow(LiveEndpointTrustError);
  } finally {
    await endpoint.close();
  }
});

test('given as files, a certificate renewed in them is served without a restart; a half-renewed pair keeps the one before', async () => {
  const [first, renewed] = [await testCertificates(), await testCertificates()];
  const dir = mkdtempSync(path.join(os.tmpdir(), 'live-endpoint-certificate-'));
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  const replace = (file: string, text: string) => {
    writeFileSync(`${file}.next`, text);
    renameSync(`${file}.next`, file);
  };
  replace(certFile, first.cert);
  replace(keyFile, first.key);
  expect(liveEndpointFromEnv({ AGENT_LIVE_TLS_CERT: certFile, AGENT_LIVE_TLS_KEY: keyFile })?.tls).toEqual({
    certFile,
    keyFile,
  });
  const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  const calls = new LiveModelCalls();
  const endpoint = await startLiveEndpoint({
    host: '127.0.0.1',
    port: 0,
    tls: { certFile, keyFile },
    calls,
    cancels: new HeardCancels(),
  });
  const served = async (ca: string) => {
    const tap = calls.open('conv-a', `run/${Math.random()}`);
    tap.end();
    const signal = AbortSignal.timeout(5_000);
    const response = await requestLiveEndpoint({ url: tap.url! }, { method: 'GET', signal, ca }).catch(
      () => undefined,
    );
    response?.resume();
    return response?.statusCode === 200;
  };
  try {
    expect(await served(first.ca)).toBe(true);
    expect(await served(renewed.ca)).toBe(false);
    replace(certFile, renewed.cert);
    await until(() => warn.mock.calls.some(([line]) => /served before stays/.test(String(line))));
    expect(await served(first.ca)).toBe(true);
    replace(keyFile, renewed.key);
    for (let tries = 0; !(await served(renewed.ca)); tries++) {
      if (tries > 100) throw new Error('the renewed certificate was never served');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await served(first.ca)).toBe(false);
  } finally {
    warn.mockRestore();
    await endpoint.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a knock reaches a TLS endpoint through the pin in its worker's identity, and no other pin gets through", async () => {
  const elsewhere = new HeardCancels();
  const other = await startLiveEndpoint({
    host: '127.0.0.1',
    port: 0,
    tls: 'self-signed',
    calls: new LiveModelCalls(),
    cancels: elsewhere,
  });
  try {
    const identity = identityWithLiveEndpoint('1@a', other);
    expect(identity).toBe(`1@a ${other.url} sha256:${other.pin}`);
    expect(liveEndpointOfIdentity(identity)).toEqual({ url: other.url, pin: other.pin });
    const wrongPin = { url: `${other.url}/cancel-requested/run-0`, pin: '0'.repeat(64) };
    await expect(
      requestLiveEndpoint(wrongPin, { method: 'POST', signal: AbortSignal.timeout(5_000) }),
    ).rejects.toThrow(LiveEndpointTrustError);
    const connection = {
      workflowService: {
        describeWorkflowExecution: async () => ({ pendingActivities: [{ lastWorkerIdentity: identity }] }),
      },
    } as unknown as Parameters<typeof announceCancelRequest>[0];
    announceCancelRequest(connection, 'default', 'https://127.0.0.1:1', 'conv-a', 'run-1');
    await until(() => elsewhere.heard.length === 1);
    expect(elsewhere.heard).toEqual(['run-1']);
  } finally {
    await other.close();
  }
});

test('TLS by default beyond loopback, plain on it; AGENT_LIVE_TLS and a given certificate', async () => {
  expect(liveTlsOf({ host: '127.0.0.1' })).toBe('off');
  expect(liveTlsOf({ host: '::1' })).toBe('off');
  expect(liveTlsOf({ host: '0.0.0.0' })).toBe('self-signed');
  expect(liveTlsOf({ host: '10.0.0.3' })).toBe('self-signed');
  expect(liveTlsOf({ host: '127.0.0.1', tls: 'self-signed' })).toBe('self-signed');
  expect(liveEndpointFromEnv({ AGENT_LIVE_TLS: 'on' })).toEqual({
    host: '127.0.0.1',
    port: 0,
    tls: 'self-signed',
  });
  expect(
    liveEndpointFromEnv({
      AGENT_LIVE_ENDPOINT: '0.0.0.0:7290',
      AGENT_LIVE_URL: 'http://w:7290',
      AGENT_LIVE_TLS: 'off',
    }),
  ).toEqual({ host: '0.0.0.0', port: 7290, advertisedUrl: 'http://w:7290', tls: 'off' });
  expect(() => liveEndpointFromEnv({ AGENT_LIVE_TLS: 'yes' })).toThrow(/auto, on or off/);
  expect(() => liveEndpointFromEnv({ AGENT_LIVE_TLS_CERT: '/x.pem' })).toThrow(/set together/);
  expect(() =>
    liveEndpointFromEnv({ AGENT_LIVE_TLS_CERT: '/nowhere/x.pem', AGENT_LIVE_TLS_KEY: '/nowhere/k.pem' }),
  ).toThrow(/AGENT_LIVE_TLS_CERT, AGENT_LIVE_TLS_KEY: cannot read \/nowhere\/x.pem/);
  // An endpoint serving TLS is not advertised as plain HTTP.
  await expect(
    startLiveEndpoint({
      host: '127.0.0.1',
      port: 0,
      tls: 'self-signed',
      advertisedUrl: 'http://worker-3:7290',
      calls: new LiveModelCalls(),
      cancels: new HeardCancels(),
    }),
  ).rejects.toThrow(/is https/);
});
