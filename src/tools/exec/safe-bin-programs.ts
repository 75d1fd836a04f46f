/**
 * What each program `safe-bin` mode knows may take: exactly these options, nothing else. Every
 * option listed only reads the files it is given and prints; options that write files, run other
 * programs, follow symbolic links, read lists of further file names or wait forever are absent on
 * purpose (`sort -o/--compress-program`, `ls -L`, `du -L/--files0-from`, `grep -R`, `diff -r`,
 * `md5sum -c`, `tail -f`, `date -s/-f`, …). Long options must be spelled out in full: GNU programs
 * accept any unambiguous abbreviation, so matching exact names is the only way a refused option
 * cannot come back shortened.
 */
export interface ProgramOptions {
  /** Short options that take no value; they may be clustered (`-nr`). */
  flags?: string;
  /** Short options that take a value, glued (`-n5`) or as the next word (`-n 5`): is it a path? */
  valued?: Readonly<Record<string, 'value' | 'path'>>;
  /** Long options by full name: a flag, or one that takes a value (`--name=v` or `--name v`). */
  long?: Readonly<Record<string, 'flag' | 'value' | 'path'>>;
  /**
   * How operands are read: `paths` (files, each checked), `text` (never opened: echo, tr sets, date
   * formats), or `pattern-then-paths` (grep: the first operand is the pattern unless -e/-f gave one).
   */
  operands: 'paths' | 'text' | 'pattern-then-paths';
  /** At most this many operands (uniq's second operand is an output file). */
  maxOperands?: number;
  /** `-5` means a number, not an option (head -5, seq -3 3). */
  numericDashOperands?: boolean;
  /** Nothing is an option: every word is an operand (expr, test, printf). */
  noOptions?: boolean;
}

const flagsOf = (...names: string[]) =>
  Object.fromEntries(names.map((name) => [name, 'flag' as const])) as Record<string, 'flag'>;
const valuesOf = (...names: string[]) =>
  Object.fromEntries(names.map((name) => [name, 'value' as const])) as Record<string, 'value'>;

const HEAD_TAIL: ProgramOptions = {
  flags: 'qvz',
  valued: { n: 'value', c: 'value' },
  long: { ...flagsOf('quiet', 'silent', 'verbose', 'zero-terminated'), ...valuesOf('lines', 'bytes') },
  operands: 'paths',
  numericDashOperands: true,
};

const CHECKSUM: ProgramOptions = {
  flags: 'btz',
  long: flagsOf('binary', 'text', 'tag', 'zero'),
  operands: 'paths',
};

export const SAFE_BIN_PROGRAMS: Readonly<Record<string, ProgramOptions>> = {
  base64: {
    flags: 'di',
    valued: { w: 'value' },
    long: { ...flagsOf('decode', 'ignore-garbage'), wrap: 'value' },
    operands: 'paths',
    maxOperands: 1,
  },
  basename: {
    flags: 'az',
    valued: { s: 'value' },
    long: { ...flagsOf('multiple', 'zero'), suffix: 'value' },
    operands: 'text',
  },
  cat: {
    flags: 'AbeEnstTuv',
    long: flagsOf(
      'show-all',
      'number-nonblank',
      'show-ends',
      'number',
      'squeeze-blank',
      'show-tabs',
      'show-nonprinting',
    ),
    operands: 'paths',
  },
  cmp: {
    flags: 'bls',
    valued: { i: 'value', n: 'value' },
    long: { ...flagsOf('print-bytes', 'verbose', 'silent', 'quiet'), ...valuesOf('ignore-initial', 'bytes') },
    operands: 'paths',
    maxOperands: 2,
  },
  comm: {
    flags: '123z',
    long: {
      ...flagsOf('check-order', 'nocheck-order', 'total', 'zero-terminated'),
      'output-delimiter': 'value',
    },
    operands: 'paths',
    maxOperands: 2,
  },
  cut: {
    flags: 'snz',
    valued: { b: 'value', c: 'value', d: 'value', f: 'value' },
    long: {
      ...flagsOf('complement', 'only-delimited', 'zero-terminated'),
      ...valuesOf('bytes', 'characters', 'delimiter', 'fields', 'output-delimiter'),
    },
    operands: 'paths',
  },
  date: {
    flags: 'Ru',
    valued: { d: 'value', r: 'path' },
    long: {
      ...flagsOf('utc', 'universal', 'rfc-email', 'debug'),
      date: 'value',
      'rfc-3339': 'value',
      reference: 'path',
    },
    operands: 'text',
  },
  diff: {
    flags: 'abBcdeEiNqstTuwy',
    valued: { C: 'value', U: 'value', W: 'value', I: 'value' },
    long: {
      ...flagsOf(
        'text',
        'ignore-space-change',
        'ignore-blank-lines',
        'minimal',
        'ed',
        'ignore-tab-expansion',
        'ignore-case',
        'new-file',
        'brief',
        'report-identical-files',
        'expand-tabs',
        'initial-tab',
        'ignore-all-space',
        'side-by-side',
        'strip-trailing-cr',
        'suppress-common-lines',
      ),
      ...valuesOf('unified', 'context', 'width', 'ignore-matching-lines', 'label', 'color'),
    },
    operands: 'paths',
    maxOperands: 2,
  },
  dirname: { flags: 'z', long: flagsOf('zero'), operands: 'text' },
  du: {
    flags: 'abchksSx0',
    valued: { d: 'value' },
    long: {
      ...flagsOf(
        'all',
        'apparent-size',
        'bytes',
        'total',
        'human-readable',
        'si',
        'summarize',
        'separate-dirs',
        'one-file-system',
        'null',
      ),
      'max-depth': 'value',
    },
    operands: 'paths',
  },
  echo: { flags: 'neE', operands: 'text' },
  expr: { operands: 'text', noOptions: true },
  false: { operands: 'text', noOptions: true },
  fold: {
    flags: 'bs',
    valued: { w: 'value' },
    long: { ...flagsOf('bytes', 'spaces'), width: 'value' },
    operands: 'paths',
  },
  grep: {
    flags: 'EFGPivwxyclLonhHbsqraIzZTU',
    valued: { e: 'value', f: 'path', m: 'value', A: 'value', B: 'value', C: 'value' },
    long: {
      ...flagsOf(
        'extended-regexp',
        'fixed-strings',
        'basic-regexp',
        'perl-regexp',
        'ignore-case',
        'no-ignore-case',
        'invert-match',
        'word-regexp',
        'line-regexp',
        'count',
        'files-with-matches',
        'files-without-match',
        'only-matching',
        'line-number',
        'no-filename',
        'with-filename',
        'byte-offset',
        'quiet',
        'silent',
        'no-messages',
        'recursive',
        'text',
        'null',
        'null-data',
        'initial-tab',
        'line-buffered',
      ),
      ...valuesOf(
        'regexp',
        'max-count',
        'after-context',
        'before-context',
        'context',
        'include',
        'exclude',
        'exclude-dir',
        'color',
        'colour',
        'binary-files',
        'label',
      ),
      file: 'path',
      'exclude-from': 'path',
    },
    operands: 'pattern-then-paths',
  },
  head: HEAD_TAIL,
  join: {
    flags: 'iz',
    valued: {
      a: 'value',
      e: 'value',
      j: 'value',
      o: 'value',
      t: 'value',
      v: 'value',
      '1': 'value',
      '2': 'value',
    },
    long: flagsOf('ignore-case', 'check-order', 'nocheck-order', 'header', 'zero-terminated'),
    operands: 'paths',
    maxOperands: 2,
  },
  ls: {
    flags: 'aAbBcCdfFgGhiklmnNopqQrRsStuUvwxX1',
    valued: { I: 'value', T: 'value', w: 'value' },
    long: {
      ...flagsOf(
        'all',
        'almost-all',
        'escape',
        'ignore-backups',
        'directory',
        'classify',
        'file-type',
        'full-time',
        'no-group',
        'human-readable',
        'si',
        'inode',
        'kibibytes',
        'numeric-uid-gid',
        'literal',
        'hide-control-chars',
        'show-control-chars',
        'quote-name',
        'recursive',
        'reverse',
        'size',
        'context',
        'group-directories-first',
      ),
      ...valuesOf(
        'sort',
        'time',
        'time-style',
        'color',
        'format',
        'ignore',
        'hide',
        'width',
        'tabsize',
        'block-size',
        'quoting-style',
        'indicator-style',
      ),
    },
    operands: 'paths',
  },
  md5sum: CHECKSUM,
  nl: {
    flags: 'p',
    valued: {
      b: 'value',
      d: 'value',
      f: 'value',
      h: 'value',
      i: 'value',
      l: 'value',
      n: 'value',
      s: 'value',
      v: 'value',
      w: 'value',
    },
    long: {
      'no-renumber': 'flag',
      ...valuesOf(
        'body-numbering',
        'section-delimiter',
        'footer-numbering',
        'header-numbering',
        'line-increment',
        'join-blank-lines',
        'number-format',
        'number-separator',
        'starting-line-number',
        'number-width',
      ),
    },
    operands: 'paths',
  },
  od: {
    flags: 'bcdfilosvx',
    valued: { A: 'value', j: 'value', N: 'value', S: 'value', t: 'value' },
    long: {
      'output-duplicates': 'flag',
      ...valuesOf('address-radix', 'skip-bytes', 'read-bytes', 'strings', 'format', 'width'),
    },
    operands: 'paths',
  },
  paste: {
    flags: 'sz',
    valued: { d: 'value' },
    long: { ...flagsOf('serial', 'zero-terminated'), delimiters: 'value' },
    operands: 'paths',
  },
  printf: { operands: 'text', noOptions: true },
  pwd: { flags: 'LP', operands: 'text', maxOperands: 0 },
  realpath: {
    flags: 'eqsz',
    long: flagsOf('canonicalize-existing', 'quiet', 'strip', 'no-symlinks', 'zero'),
    operands: 'paths',
  },
  rev: { operands: 'paths' },
  seq: {
    flags: 'w',
    valued: { f: 'value', s: 'value' },
    long: { 'equal-width': 'flag', ...valuesOf('format', 'separator') },
    operands: 'text',
    numericDashOperands: true,
  },
  sha1sum: CHECKSUM,
  sha256sum: CHECKSUM,
  // Not in the default list (its option set is large and `--compress-program` runs programs); an
  // operator who adds it gets only these.
  sort: {
    flags: 'bdfgiMhnRrVcCsuz',
    valued: { k: 'value', t: 'value' },
    long: {
      ...flagsOf(
        'ignore-leading-blanks',
        'dictionary-order',
        'ignore-case',
        'general-numeric-sort',
        'ignore-nonprinting',
        'month-sort',
        'human-numeric-sort',
        'numeric-sort',
        'random-sort',
        'reverse',
        'version-sort',
        'check',
        'stable',
        'unique',
        'zero-terminated',
      ),
      ...valuesOf('key', 'field-separator', 'sort'),
    },
    operands: 'paths',
  },
  stat: {
    flags: 'ft',
    valued: { c: 'value' },
    long: { ...flagsOf('file-system', 'terse'), ...valuesOf('format', 'printf') },
    operands: 'paths',
  },
  tac: {
    flags: 'br',
    valued: { s: 'value' },
    long: { ...flagsOf('before', 'regex'), separator: 'value' },
    operands: 'paths',
  },
  tail: HEAD_TAIL,
  test: { operands: 'paths', noOptions: true },
  tr: {
    flags: 'cCdst',
    long: flagsOf('complement', 'delete', 'squeeze-repeats', 'truncate-set1'),
    operands: 'text',
  },
  true: { operands: 'text', noOptions: true },
  uniq: {
    flags: 'cdDiuz',
    valued: { f: 'value', s: 'value', w: 'value' },
    long: {
      ...flagsOf('count', 'repeated', 'ignore-case', 'unique', 'zero-terminated'),
      ...valuesOf('skip-fields', 'skip-chars', 'check-chars'),
    },
    operands: 'paths',
    maxOperands: 1,
  },
  wc: {
    flags: 'clmwL',
    long: flagsOf('bytes', 'chars', 'lines', 'words', 'max-line-length'),
    operands: 'paths',
  },
};

/** What a program the operator added without a table entry may take: no options, operands as paths. */
export const UNKNOWN_PROGRAM: ProgramOptions = { operands: 'paths' };
