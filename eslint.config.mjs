import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The layers, lowest first: a folder may import its own and those below it, never one above it or
 * a sibling on its level. Workflow code stands apart (its own block below).
 */
const LAYERS = [
  ['shared'],
  ['platform'],
  ['history'],
  ['client'],
  ['tools'],
  ['temporal-server'],
  ['mcp', 'rap', 'a2a-remote'],
  ['activities'],
  ['worker'],
  ['gateway', 'acp'],
  // The console for people, and the agent as an MCP server: on the gateway's tokens, access checks and event streams.
  ['console', 'mcp-server'],
  // The HTTP app: the gateway's API and the console composed on one server.
  ['http'],
  ['cli'],
];
/** Below its layer, but still kept apart: the ACP agent and the MCP server talk to workers only through Temporal. */
const ALSO_FORBIDDEN = { acp: ['worker'], 'mcp-server': ['worker'] };
/** Workflow code is imported (as types, or to bundle it) only from the worker up. */
const SEE_WORKFLOWS = new Set(['worker', 'gateway', 'acp', 'cli']);

/** One config block per folder: imports of the layers above it (and its siblings) are errors. */
function layerRules() {
  return LAYERS.flatMap((level, index) =>
    level.flatMap((folder) => {
      const above = [
        ...level.filter((sibling) => sibling !== folder),
        ...LAYERS.slice(index + 1).flat(),
        ...(ALSO_FORBIDDEN[folder] ?? []),
        ...(SEE_WORKFLOWS.has(folder) ? [] : ['workflows']),
      ];
      if (above.length === 0) return [];
      return {
        files: [`src/${folder}/**/*.ts`],
        rules: {
          'no-restricted-imports': [
            'error',
            {
              patterns: [
                {
                  group: above.flatMap((layer) => [`../${layer}/*`, `../../${layer}/*`]),
                  message: `src/${folder} is below that layer: pass what it needs in from above instead.`,
                },
              ],
            },
          ],
        },
      };
    }),
  );
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tools/**', 'coverage/**', 'bench/results/**', 'docs/api/**'] },
  // Typechecked by test/package/pack-install.test.ts against the installed package, not this project.
  { ignores: ['test/package/fixture/*.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: {
        // The bench peers with packages of their own are checked against their own dependencies; the
        // examples against the built package, as a user's project sees it.
        project: [
          './tsconfig.json',
          './examples/tsconfig.json',
          './bench/restate-peer/tsconfig.json',
          './bench/dbos-peer/tsconfig.json',
          './bench/langgraph-peer/tsconfig.json',
        ],
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { prefer: 'type-imports', fixStyle: 'inline-type-imports' },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  ...layerRules(),
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node built-ins, no I/O libraries,
    // and activities only as types.
    files: ['src/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'path', 'child_process', 'os', 'crypto', 'http', 'https', 'net'],
              message: 'Workflows must be deterministic: no Node built-ins.',
            },
            {
              group: ['openai', '@temporalio/activity', '@temporalio/client', '@temporalio/worker'],
              message: 'Not allowed in the workflow bundle.',
            },
            {
              group: [
                '**/tools/**',
                '**/activities/**',
                '**/worker/**',
                '**/temporal-server/**',
                '**/client/**',
                '**/platform/**',
                '**/history/**',
                '**/cli/**',
              ],
              allowTypeImports: true,
              message: 'Workflows import activities and tools as types only.',
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'Read the time with workflowTime() (workflow-time.ts).' },
        { object: 'Math', property: 'random', message: 'Workflows must be deterministic: no randomness.' },
      ],
    },
  },
  {
    // The workflow bundle's modules are instantiated once per worker thread and shared by every
    // conversation it has cached (src/workflows/shared-module-graph.ts): what a module keeps at its
    // top level must be constant. Temporal freezes what modules export, but a frozen Map or Set
    // still accepts writes, and a top-level `let` is not frozen at all.
    files: ['src/workflows/**/*.ts', 'src/shared/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...[
          'Program > VariableDeclaration',
          'Program > ExportNamedDeclaration > VariableDeclaration',
        ].flatMap((declaration) => [
          {
            selector: `${declaration}[kind!="const"]`,
            message: 'Module state is shared by every cached conversation: top-level bindings are const.',
          },
          {
            selector: `${declaration} > VariableDeclarator:not([id.typeAnnotation.typeAnnotation.typeName.name=/^Readonly(Map|Set)$/]) > NewExpression[callee.name=/^(Map|Set|WeakMap|WeakSet)$/]`,
            message:
              'Module state is shared by every cached conversation, and a frozen Map or Set still accepts writes: type a top-level one ReadonlyMap or ReadonlySet.',
          },
        ]),
        {
          selector: 'PropertyDefinition[static=true][readonly!=true]',
          message: 'Module state is shared by every cached conversation: static fields are readonly.',
        },
      ],
    },
  },
  {
    // The one place workflow code reads the (deterministic) workflow time.
    files: ['src/workflows/workflow-time.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    // What a CI run is (where a missing program, server or browser fails instead of skipping) is
    // decided in one place.
    files: ['test/**/*.ts', 'bench/**/*.ts', 'chaos/**/*.ts', 'scripts/**/*.mjs'],
    ignores: ['test/support/in-ci.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.property.name='env'][property.name='CI']",
          message: 'Ask inCi() (test/support/in-ci.ts): one rule for what a CI run is.',
        },
      ],
    },
  },
  {
    // The console's browser script.
    files: ['src/console/assets/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: {
        document: 'readonly',
        Element: 'readonly',
        setTimeout: 'readonly',
        fetch: 'readonly',
        clearTimeout: 'readonly',
        EventSource: 'readonly',
      },
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: {
      globals: {
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        console: 'readonly',
        fetch: 'readonly',
      },
    },
  },
);
