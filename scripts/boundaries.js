// Who may import whom, once: used by eslint.config.js (no-restricted-imports) and checked by
// test/unit/boundaries.test.ts (which also checks every package declares the workspace
// packages it imports). Each rule: the files it covers, and the import specifiers forbidden there.

/** @type {{ name: string, files: string[], forbidden: string[], why: string }[]} */
export const rules = [
  {
    name: 'libs and tools never import services',
    files: ['libs/**', 'tools/**'],
    forbidden: ['@weft/svc-*', '@weft/cli', '**/services/**'],
    why: 'a library is used by services, never the other way round',
  },
  {
    name: 'no bus → store',
    files: ['libs/bus/**'],
    forbidden: ['@weft/store'],
    why: 'the bus is a transport; the store decides what is permanent and marks it (@weft/core errors)',
  },
  {
    name: 'no http → bus',
    files: ['libs/http/**'],
    forbidden: ['@weft/bus'],
    why: 'the HTTP edge maps error markers (@weft/core), not transport types',
  },
  {
    name: 'no service → service',
    files: ['services/gateway/**', 'services/writer/**', 'services/query/**', 'services/inference/**', 'services/cli/**'],
    // `!`: allowed after all. The web UI (services/ui) has no process of its own: it is the
    // static front the query service serves.
    forbidden: ['@weft/svc-*', '!@weft/svc-ui', '**/services/**'],
    why: 'shared code belongs in a library; only the all-in-one composes services',
  },
  {
    name: 'no bench → test',
    files: ['bench/**'],
    forbidden: ['**/test/**', '**/test/helpers/**'],
    why: 'benchmarks run from a fresh clone without the test tree; shared helpers live in bench/ or a library',
  },
  {
    name: 'bench uses package entry points',
    files: ['bench/**'],
    forbidden: ['**/libs/**', '**/services/**', '**/tools/**'],
    why: 'a benchmark measures what a package exports; what it needs is exported from the package index',
  },
  {
    name: 'no product → scripts',
    files: ['libs/**', 'services/**', 'tools/**'],
    forbidden: ['**/scripts/**'],
    why: 'scripts build, start and check the product; what both need lives in a package (scripts may import packages)',
  },
];

/** The rules as ESLint flat-config objects. */
export const boundaries = rules.map((rule) => ({
  files: rule.files.map((f) => `${f.replace(/\*\*$/, '')}**/*.{ts,tsx,mjs}`),
  rules: {
    'no-restricted-imports': ['error', { patterns: [{ group: rule.forbidden, message: `${rule.name}: ${rule.why}` }] }],
  },
}));
