#!/usr/bin/env node
// The package "bin": a plain-JS shim so an old Node fails with a clear message instead of a syntax error on .ts.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(
    `flywheel needs Node.js 24 or newer (this is ${process.version}).\n` +
      'In a checkout, run it through npm, which puts the pinned Node 24 first on PATH:\n' +
      '  npx flywheel --help        or        npm run flywheel -- --help\n',
  );
  process.exit(1);
}
await import('./flywheel.ts');
