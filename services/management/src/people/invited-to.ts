import { type Queryable } from '@intake/shared/base';
import { findInvitationNames } from './member.repository';

/**
 * What an invitation is to, in the words its mail and the join page use: the account and, for a member limited to
 * projects, those projects (an agency's clients), so a client's staff read the client's name and not only the
 * agency's.
 */
export interface InvitedTo {
  account: string;
  /** The names of the projects the member is limited to, by name; empty: the whole account. */
  projects: string[];
}

/** What the invitation of a member limited to `projectIds` (null: the whole account) is to, on one line each. */
export async function invitedTo(db: Queryable, accountId: string, projectIds: string[] | null): Promise<InvitedTo> {
  const names = await findInvitationNames(db, accountId, projectIds ?? []);
  return { account: oneLine(names.account ?? 'an Intake account'), projects: names.projects.map(oneLine) };
}

/** Projects as a phrase: `Hale Dental`, `Hale Dental and Summit Roofing`, `Hale Dental, Keystone and 3 more`. */
export function projectsPhrase(names: readonly string[]): string {
  if (names.length <= 2) return names.join(' and ');
  if (names.length === 3) return `${names[0]}, ${names[1]} and ${names[2]}`;
  return `${names[0]}, ${names[1]} and ${names.length - 2} more`;
}

/** The subject of an invitation's mail: the client first when the member is limited to clients. */
export function invitationSubject(to: InvitedTo): string {
  return to.projects.length > 0
    ? `Join ${projectsPhrase(to.projects)} (${to.account}) on Intake`
    : `Join ${to.account} on Intake`;
}

/** Where the invitation's text says it leads: `Pixel & Pine`, or `the forms of Hale Dental at Pixel & Pine`. */
export function invitationPlace(to: InvitedTo): string {
  return to.projects.length > 0 ? `the forms of ${projectsPhrase(to.projects)} at ${to.account}` : to.account;
}

/** A name put in a mail's subject or text: on one line. */
export const oneLine = (text: string) => text.replace(/[\r\n]+/g, ' ');
