import { problem } from '../contracts/problems';

/**
 * Roles, each allowing what the one before it does and more: `viewer` reads everything and exports;
 * `editor` also changes forms, submissions and webhooks; `admin` also manages API keys, members below
 * owner, and reads the audit log; `owner` also manages owners. Members have one of the four,
 * management keys one of the first three.
 */
export const ROLES = ['viewer', 'editor', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];
/** The roles a management key may have (no key is an owner). */
export const KEY_ROLES = ['viewer', 'editor', 'admin'] as const satisfies readonly Role[];
export type KeyRole = (typeof KEY_ROLES)[number];

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** True when `role` may do what `needed` may. */
export function roleAtLeast(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

/**
 * The least role a management route needs: the route's own `role` when it names one, else by method:
 * a read (GET) is a viewer's, anything that changes state an editor's. A route added without a role is
 * therefore never open to a read-only key for writes, and never admin-only by accident of omission;
 * routes that touch keys, members or the audit log name `admin` themselves.
 */
export function requiredRole(def: { method: string; role?: Role }): Role {
  if (def.role) return def.role;
  return def.method === 'GET' ? 'viewer' : 'editor';
}

/** Throws 403 `forbidden` unless `role` reaches `needed`. */
export function requireRole(role: Role, needed: Role): void {
  if (!roleAtLeast(role, needed))
    throw problem('forbidden', `This needs the ${needed} role or higher; this ${role} cannot do it`, {
      required_role: needed,
    });
}
