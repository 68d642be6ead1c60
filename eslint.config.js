// ESLint, type-aware, on typescript-eslint's strict set: it catches the bugs that slip past tsc
// (floating promises, unused values, `any` leaking in, awaits of non-promises). Formatting is
// Prettier's job. The few rules relaxed below say why.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The layering of docs/DESIGN §2, as import rules (type imports included; tests beside the code
 * too — a test that crosses stages lives in test/stages/):
 * - listener, engine and delivery never import each other: they meet only through the durable
 *   queues and the vocabulary of src/notification/;
 * - the store knows no stage, no transport and no HTTP route;
 * - api and console reach delivery only through the store;
 * - nothing imports src/roles/ or src/service.ts but the composition root (service.ts, roles/
 *   itself) and the CLI.
 */
const folder = (name) => [`../${name}/**`, `../../${name}/**`, `../../../${name}/**`];
const compositionRoot = ['../roles/**', '../../roles/**', '../../../roles/**', '../service.ts', '../../service.ts', '../../../service.ts'];
const forbid = (files, folders, why) => ({
  files,
  rules: {
    'no-restricted-imports': [
      'error',
      { patterns: [{ group: [...folders.flatMap(folder), ...compositionRoot], message: `${why} (eslint.config.js: the layering)` }] },
    ],
  },
});
const layering = [
  forbid(['src/**/*.ts'], [], 'only service.ts and the CLI import roles/ and service.ts'),
  forbid(
    ['src/engine/**/*.ts'],
    ['listener', 'delivery', 'api', 'console'],
    'the engine meets the listener and delivery only through the queues',
  ),
  forbid(['src/listener/**/*.ts'], ['engine', 'delivery', 'api', 'console'], 'the listener hands events on only through the inbound queue'),
  forbid(['src/delivery/**/*.ts'], ['engine', 'listener', 'api', 'console'], 'delivery takes notifications only from the outbound queue'),
  forbid(
    ['src/store/**/*.ts'],
    ['engine', 'listener', 'delivery', 'api', 'console', 'ntfy', 'nip9a', 'platform'],
    'the store knows no stage, transport or route',
  ),
  forbid(['src/api/**/*.ts', 'src/console/**/*.ts'], ['delivery'], 'api and console reach delivery only through the store'),
  // The composition root and the CLI wire everything.
  { files: ['src/roles/**/*.ts', 'src/service.ts', 'src/cli.ts', 'src/cli-*.ts'], rules: { 'no-restricted-imports': 'off' } },
];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'packages/client/dist/**',
      'packages/client/src/generated/**',
      'native/**',
      'data/**',
      '**/*.js',
      '**/*.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test's test() and describe() return promises the runner itself awaits.
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite'] }] },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-explicit-any': 'error',
      // Numbers and booleans in log and error strings read fine; objects and unknowns still fail.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true, allowNullish: true }],
      // `() => void promise` and `(x) => set.add(x)` arrow shorthands are idiomatic here.
      '@typescript-eslint/no-confusing-void-expression': 'off',
      // `Promise.reject(err)` in a catch hands on whatever was thrown, like `throw err` (which
      // only-throw-error allows for unknown): wrapping it would change the error callers see.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // Port methods are async by contract even where one adapter answers synchronously.
      '@typescript-eslint/require-await': 'off',
    },
  },
  ...layering,
);
