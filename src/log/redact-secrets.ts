/** Replaces every occurrence of each secret with `***`, longest secrets first. */
export const redactSecrets = (text: string, secrets: readonly string[]): string => {
  const ordered = [...new Set(secrets)].filter((secret) => secret !== '').sort((a, b) => b.length - a.length);
  if (ordered.length === 0) return text;
  const pattern = new RegExp(
    ordered.map((secret) => secret.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'),
    'g',
  );
  return text.replace(pattern, '***');
};
