import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** One config block per layer: imports of the layers above it are errors. */
function layerRules(above) {
  return Object.entries(above).map(([folder, layers]) => ({
    files: [`${folder}/**/*.ts`],
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
  // Layers point down: shared < platform < history < client < tools < mcp, rap < activities < worker <
  // gateway, acp < cli. Workflow code stands apart (below). A folder may import its own layer and
  // those below it.
  ...layerRules({
    'src/shared': [
      'platform',
      'history',
      'client',
      'tools',
      'mcp',
      'rap',
      'activities',
      'worker',
      'gateway',
      'acp',
      'cli',
      'workflows',
    ],
    'src/platform': [
      'history',
      'client',
      'tools',
      'mcp',
      'rap',
      'activities',
      'worker',
      'gateway',
      'acp',
      'cli',
      'workflows',
    ],
    'src/history': [
      'client',
      'tools',
      'mcp',
      'rap',
      'activities',
      'worker',
      'gateway',
      'acp',
      'cli',
      'workflows',
    ],
    'src/client': ['tools', 'mcp', 'rap', 'activities', 'worker', 'gateway', 'acp', 'cli', 'workflows'],
    'src/tools': ['mcp', 'rap', 'activities', 'worker', 'gateway', 'acp', 'cli', 'workflows'],
    'src/mcp': ['rap', 'activities', 'worker', 'gateway', 'acp', 'cli', 'workflows'],
    'src/rap': ['mcp', 'activities', 'worker', 'gateway', 'acp', 'cli', 'workflows'],
    'src/activities': ['worker', 'gateway', 'acp', 'cli', 'workflows'],
    'src/worker': ['gateway', 'acp', 'cli'],
    'src/gateway': ['acp', 'cli'],
    'src/acp': ['worker', 'gateway', 'cli'],
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
              group: [
                '**/tools/**',
                '**/activities/**',
                '**/worker/**',
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
