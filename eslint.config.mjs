import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** One config block per layer: imports of the layers above it are errors. */
function layerRules(above) {
  return Object.entries(above).map(([folder, layers]) => ({
    files: [`${folder}/**/*.ts`],
    // The command line is the top layer: it starts servers, workers and the gateway.
    ignores: folder === 'src/client' ? ['src/client/commands/**', 'src/client/cli.ts'] : [],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: layers.flatMap((layer) => [`../${layer}/*`, `../../${layer}/*`]),
              message: `${folder} is below that layer: pass what it needs in from above instead.`,
            },
          ],
        },
      ],
    },
  }));
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tools/**', 'coverage/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { project: './tsconfig.json' } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { prefer: 'type-imports', fixStyle: 'inline-type-imports' },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // Layers point down: shared < runtime < tools < mcp, rap < activities < worker < history < client < gateway, acp <
  // the command line (src/client/commands, src/client/cli.ts).
  // Workflow code stands apart (below). A folder may import its own layer and those below it.
  ...layerRules({
    'src/shared': [
      'runtime',
      'tools',
      'mcp',
      'rap',
      'activities',
      'worker',
      'client',
      'gateway',
      'acp',
      'workflows',
    ],
    'src/runtime': ['tools', 'mcp', 'rap', 'activities', 'worker', 'client', 'gateway', 'acp', 'workflows'],
    'src/tools': ['mcp', 'rap', 'activities', 'worker', 'client', 'gateway', 'acp', 'workflows'],
    'src/mcp': ['rap', 'activities', 'worker', 'client', 'gateway', 'acp', 'workflows'],
    'src/rap': ['mcp', 'activities', 'worker', 'client', 'gateway', 'acp', 'workflows'],
    'src/activities': ['worker', 'client', 'gateway', 'acp', 'workflows'],
    'src/worker': ['client', 'gateway', 'acp'],
    'src/client': ['gateway', 'acp'],
    'src/gateway': ['acp'],
    'src/acp': ['worker', 'client', 'gateway'],
  }),
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
              group: ['**/tools/**', '**/activities/**', '**/worker/**', '**/client/**'],
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
