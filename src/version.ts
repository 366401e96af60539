import { readFileSync } from 'node:fs';

const findPackageJson = (): { version: string } => {
  // src/version.ts under tests, dist/src/version.js when built: the manifest is one or two levels up.
  for (const relative of ['../package.json', '../../package.json']) {
    try {
      const manifest = JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8'));
      if (manifest.name === 'pulse-agent') return manifest;
    } catch {}
  }
  return { version: '0.0.0' };
};

/** The package version, read once from package.json. */
export const VERSION: string = findPackageJson().version;
