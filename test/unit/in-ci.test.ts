import { inCi } from '../support/in-ci';

test('a CI run is CI set to anything but empty, 0 or false, as the CI services set it', () => {
  for (const value of ['true', 'TRUE', '1', 'yes', 'woodpecker']) expect(inCi({ CI: value })).toBe(true);
  for (const value of [undefined, '', ' ', '0', 'false', 'False', ' false '])
    expect(inCi(value === undefined ? {} : { CI: value })).toBe(false);
});
