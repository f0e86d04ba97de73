/** The origin a browser posted from: the Origin header, else the Referer's origin ("null" counts as an origin). */
export function requestOrigin(origin: string | undefined, referer: string | undefined): string | undefined {
  if (origin) return origin;
  if (!referer) return undefined;
  try {
    return new URL(referer).origin;
  } catch {
    return 'null';
  }
}
