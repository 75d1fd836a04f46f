import { printable, splitAtUnfinishedEscape, withUnprintableShown } from '../../src/shared/printable-text';

const ESC = '\x1b';

test('what a terminal would act on is dropped; newlines, tabs and other scripts stay', () => {
  expect(printable(`${ESC}[31mred${ESC}[0m`)).toBe('red');
  expect(printable(`${ESC}]52;c;cm0gLXJm${ESC}\\copied`)).toBe('copied');
  expect(printable(`${ESC}]8;;https://evil.example${ESC}\\link${ESC}]8;;${ESC}\\`)).toBe('link');
  expect(printable(`${ESC}]0;title\x07body`)).toBe('body');
  expect(printable(`${ESC}Pq#0;2;0;0;0${ESC}\\sixel`)).toBe('sixel');
  expect(printable('rm -rf ~\rls')).toBe('rm -rf ~ls');
  expect(printable('\x9b31mC1 CSI')).toBe('31mC1 CSI');
  expect(printable('file\u202Etxt.exe')).toBe('filetxt.exe');
  expect(printable('bell\x07 nul\x00 del\x7f')).toBe('bell nul del');
  expect(printable('line one\n\tline two — 流れ 👩‍💻')).toBe('line one\n\tline two — 流れ 👩‍💻');
});

test('text in pieces is split where a piece ends inside an escape sequence', () => {
  expect(splitAtUnfinishedEscape('plain')).toEqual({ ready: 'plain', held: '' });
  expect(splitAtUnfinishedEscape(`done${ESC}`)).toEqual({ ready: 'done', held: ESC });
  expect(splitAtUnfinishedEscape(`a${ESC}[3`)).toEqual({ ready: 'a', held: `${ESC}[3` });
  expect(splitAtUnfinishedEscape(`a${ESC}]52;c;abc`)).toEqual({ ready: 'a', held: `${ESC}]52;c;abc` });
  // Finished sequences are the printable step's to drop.
  expect(splitAtUnfinishedEscape(`a${ESC}[31mb`)).toEqual({ ready: `a${ESC}[31mb`, held: '' });
  expect(splitAtUnfinishedEscape(`a${ESC}]0;t\x07b`)).toEqual({ ready: `a${ESC}]0;t\x07b`, held: '' });
  // Held back no further than a kilobyte: past that it is let go, and its escape dropped.
  const long = `a${ESC}]52;c;${'x'.repeat(2_000)}`;
  expect(splitAtUnfinishedEscape(long)).toEqual({ ready: long, held: '' });
});

test('what a person decides on shows its control characters written out, not dropped', () => {
  expect(withUnprintableShown(`rm -rf ~\rls ${ESC}[2J\u202Eexe\x9b`)).toBe(
    'rm -rf ~\\rls \\x1b[2J\\u202eexe\\x9b',
  );
  expect(withUnprintableShown('{"a":1}\n\tok')).toBe('{"a":1}\n\tok');
  // Written out, nothing is left for the terminal to act on.
  const shown = withUnprintableShown(`${ESC}]52;c;cm0g\x07`);
  expect(printable(shown)).toBe(shown);
});
