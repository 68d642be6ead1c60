// ESLint, type-aware, on typescript-eslint's strict set: it catches the bugs that slip past tsc
// (floating promises, unused values, `any` leaking in, awaits of non-promises). Formatting is
// Prettier's job. The few rules relaxed below say why.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['dist/**', 'node_modules/**', 'native/**', 'data/**', '**/*.js', '**/*.mjs'],
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
);
