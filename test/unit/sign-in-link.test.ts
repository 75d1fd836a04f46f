import { linkFieldsOf, linkSignatureValid, signInLink } from '../../src/console/sign-in-link';

const KEY = 'a'.repeat(64);

function fieldsOf(link: string) {
  return linkFieldsOf(Object.fromEntries(new URL(link).searchParams));
}

test('a link carries its token name, expiry and nonce, signed with the token key', () => {
  const link = signInLink('http://127.0.0.1:8787', 'alice', KEY, 1_000);
  expect(new URL(link).pathname).toBe('/console/sign-in');
  const fields = fieldsOf(link);
  expect(fields).toMatchObject({ name: 'alice', expires: 1_000 });
  expect(linkSignatureValid(fields, fields.sig, KEY)).toBe(true);
});

test('another key, name or expiry does not verify; two links never share a nonce', () => {
  const first = fieldsOf(signInLink('http://127.0.0.1:8787', 'alice', KEY, 1_000));
  expect(linkSignatureValid(first, first.sig, 'b'.repeat(64))).toBe(false);
  expect(linkSignatureValid({ ...first, name: 'bob' }, first.sig, KEY)).toBe(false);
  expect(linkSignatureValid({ ...first, expires: 2_000 }, first.sig, KEY)).toBe(false);
  const second = fieldsOf(signInLink('http://127.0.0.1:8787', 'alice', KEY, 1_000));
  expect(second.nonce).not.toBe(first.nonce);
});

test('an incomplete link is refused by name', () => {
  expect(() => linkFieldsOf({ name: 'alice', nonce: 'n' })).toThrow('the sign-in link is incomplete');
  expect(() => linkFieldsOf({ name: 'alice', nonce: 'n', sig: 's', expires: 'soon' })).toThrow(
    'the sign-in link is incomplete',
  );
});
