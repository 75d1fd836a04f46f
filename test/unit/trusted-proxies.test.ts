import { parseTrustedProxies } from '../../src/http/trusted-proxies';

test('the proxies are addresses, CIDR ranges or named ranges', () => {
  expect(parseTrustedProxies('127.0.0.1')).toEqual(['127.0.0.1']);
  expect(parseTrustedProxies(' 10.0.0.0/8, ::1 ,fd00::/8,loopback')).toEqual([
    '10.0.0.0/8',
    '::1',
    'fd00::/8',
    'loopback',
  ]);
});

test('a hop count, "trust everyone" or a malformed entry is refused by name', () => {
  for (const text of ['1', 'true', '*', '', ' , ', '10.0.0.0/33', '::1/129', '10.0.0.1/8/8', 'proxy.example'])
    expect(() => parseTrustedProxies(text)).toThrow('--trust-proxy');
});
