import js from '@eslint/js';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      'coverage/**',
      '.cache/**',
      '.data/**',
      'packages/proto/src/generated/**',
      'packages/sdk/src/generated/**',
      'packages/sdk/bin/**',
      'packages/cli/bin/**',
      'packages/sdk/docs/**',
      'packages/sandboxctl/bin/**',
      // Run inside sandboxes by the tests, as plain Node.
      'test/fixtures/**',
      'scripts/**/*.mjs',
      'bench/**/*.mjs',
      // Runnable examples in plain JavaScript, run by test/integration/examples.test.ts.
      'examples/**/*.mjs',
      'jest.config.js',
      'eslint.config.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: {
          allowDefaultProject: [],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/ignore': ['node_modules'],
      'import-x/resolver-next': [importX.createNodeResolver({ extensions: ['.ts', '.js'] })],
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { arguments: false } },
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  // Which part may import which (docs/architecture.md). Generated gRPC types stop at the
  // gRPC edges; services never import each other; the runner runs inside the sandbox with
  // Node's built-ins and the dependency-free contract module only.
  {
    files: ['services/gateway/src/**/*.ts'],
    ignores: ['services/gateway/src/agents/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: '@sandbox/proto', message: 'gRPC types stop at agents/: use its types.' },
          ],
          patterns: [
            {
              group: ['@sandbox/agent', '@sandbox/edge-proxy', '@sandbox/runner'],
              message: 'Services talk over their APIs, not imports.',
            },
          ],
        },
      ],
    },
  },
  {
    // The gateway's gRPC edge owns the types it converts into (NodeStatus, TerminalSpec, …):
    // nodes/, terminals/ and the rest import agents/, never the other way.
    files: ['services/gateway/src/agents/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@sandbox/agent', '@sandbox/edge-proxy', '@sandbox/runner'],
              message: 'Services talk over their APIs, not imports.',
            },
            {
              regex: '^\\.\\./',
              message: 'agents/ imports no other gateway folder: declare the type here instead.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['services/agent/src/**/*.ts'],
    ignores: ['services/agent/src/grpc/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: '@sandbox/proto', message: 'gRPC types stop at grpc/: use the runtime types.' },
          ],
          patterns: [
            {
              group: ['@sandbox/gateway', '@sandbox/edge-proxy'],
              message: 'Services talk over their APIs, not imports.',
            },
            {
              group: ['@sandbox/runner'],
              message: 'The runner protocol is spoken in runtime/runner/ only.',
            },
          ],
        },
      ],
    },
  },
  {
    // The agent's side of the runner protocol: the one place that imports the runner package.
    files: ['services/agent/src/runtime/runner/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: '@sandbox/proto', message: 'gRPC types stop at grpc/.' }],
          patterns: [
            {
              group: ['@sandbox/gateway', '@sandbox/edge-proxy'],
              message: 'Services talk over their APIs, not imports.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['services/edge-proxy/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ['@sandbox/proto'],
          patterns: [
            {
              group: ['@sandbox/gateway', '@sandbox/agent', '@sandbox/runner'],
              message: 'Services talk over their APIs, not imports.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['packages/*/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@sandbox/gateway', '@sandbox/agent', '@sandbox/edge-proxy'],
              message: 'Packages never import services.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['packages/runner/src/**/*.ts'],
    ignores: ['packages/runner/src/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!node:|@sandbox/contract/run$|@sandbox/errors$|\\.)',
              allowTypeImports: true,
              message:
                'The runner runs inside the sandbox: Node built-ins and @sandbox/contract/run only.',
            },
            {
              group: ['@sandbox/errors'],
              allowTypeImports: true,
              message: 'Type imports only inside the sandbox.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
