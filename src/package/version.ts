import { readFileSync } from 'node:fs';

const findPackageJson = (): { version: string } => {
  // Two levels up from src/package/version.ts under tests and from dist/bundle/pulse.mjs, three
  // from tsc's dist/src/package/version.js.
  for (const relative of ['../../package.json', '../../../package.json']) {
    try {
      const manifest = JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8'));
      if (manifest.name === 'pulse-agent') return manifest;
    } catch {}
  }
  return { version: '0.0.0' };
};

/** The package version, read once from package.json. */
export const VERSION: string = findPackageJson().version;
