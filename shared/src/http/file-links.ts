import type { Config } from '../base/config';
import type { SecretBox } from '../base/secrets';

/** How long a file download link works. */
export const FILE_LINK_TTL_SECONDS = 7 * 24 * 3600;

/**
 * A signed, expiring download link for a stored file, served by management at `GET /v1/files/:id`.
 * Anyone holding the link can download until it expires; nothing else is needed.
 */
export function fileDownloadUrl(props: {
  config: Pick<Config, 'PUBLIC_BASE_URL'>;
  secrets: SecretBox;
  fileId: string;
  now: Date;
  ttlSeconds?: number;
}): string {
  const expires = Math.floor(props.now.getTime() / 1000) + (props.ttlSeconds ?? FILE_LINK_TTL_SECONDS);
  const signature = props.secrets.sign(`${props.fileId}:${expires}`);
  return `${props.config.PUBLIC_BASE_URL}/v1/files/${props.fileId}?expires=${expires}&signature=${signature}`;
}

/** Checks a link's signature and expiry: 'ok', 'expired' or 'invalid'. */
export function checkFileLink(props: {
  secrets: SecretBox;
  fileId: string;
  expires: string;
  signature: string;
  now: Date;
}): 'ok' | 'expired' | 'invalid' {
  if (!/^\d{1,12}$/.test(props.expires) || !props.secrets.verify(`${props.fileId}:${props.expires}`, props.signature))
    return 'invalid';
  return Number(props.expires) * 1000 < props.now.getTime() ? 'expired' : 'ok';
}
