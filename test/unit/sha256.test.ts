import { createHash, randomBytes } from 'node:crypto';
import { sha256Hex } from '../../src/shared/sha256';

const reference = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

test('known vectors', () => {
  expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});

test('agrees with node:crypto on every length around the block boundaries and on random text', () => {
  for (let length = 0; length < 200; length++) {
    const text = 'x'.repeat(length);
    expect(sha256Hex(text)).toBe(reference(text));
  }
  for (let i = 0; i < 300; i++) {
    // Random code units: ASCII, two- and three-byte characters, astral pairs and lone surrogates.
    const units = Array.from(randomBytes(1 + (i % 97) * 2), (byte, index) =>
      index % 5 === 0
        ? 0xd800 + byte
        : index % 3 === 0
          ? 0x4e00 + byte
          : byte % 2
            ? 0xe9
            : 0x41 + (byte % 26),
    );
    const text = String.fromCharCode(...units);
    expect(sha256Hex(text)).toBe(reference(text));
  }
  const long = randomBytes(200_000).toString('base64');
  expect(sha256Hex(long)).toBe(reference(long));
});
