// The operator console's single-page app (web/console/): bundled with esbuild into
// dist/console-ui/ — `app-<hash>.js`, `app-<hash>.css` and an `index.html` that names them — so
// the service serves the bundles with a long cache and the page revalidated. Called by
// scripts/build.mjs after tsc; `node scripts/build-console.mjs` rebuilds only the console.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

export async function buildConsole() {
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    console.warn('build: esbuild is not installed; /console will answer 503 (install dev dependencies and run npm run build)');
    return false;
  }
  const source = join(root, 'web', 'console');
  const out = join(root, 'dist', 'console-ui');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const result = await esbuild.build({
    entryPoints: { app: join(source, 'main.js') },
    bundle: true,
    format: 'esm',
    target: ['es2020'],
    minify: true,
    sourcemap: false,
    entryNames: '[name]-[hash]',
    outdir: out,
    metafile: true,
    logLevel: 'warning',
    legalComments: 'linked',
  });
  const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
  const js = outputs.find((n) => n.endsWith('.js'));
  const css = outputs.find((n) => n.endsWith('.css'));
  if (!js || !css) throw new Error(`build-console: expected a .js and a .css bundle, got ${outputs.join(', ')}`);
  const page = readFileSync(join(source, 'index.html'), 'utf8').replace('__JS__', js).replace('__CSS__', css);
  writeFileSync(join(out, 'index.html'), page);
  console.log(`build: console bundled (dist/console-ui/${js}, ${css})`);
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await buildConsole();
}
