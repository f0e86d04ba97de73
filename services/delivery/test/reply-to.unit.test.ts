import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPLY_TO_FIELDS, replyToOf } from '../src';

describe('Reply-To of the notification e-mail', () => {
  it('is taken from exactly the field names docs/decisions/mail.md lists, ignoring case', () => {
    const doc = readFileSync(path.join(__dirname, '../../../docs/decisions/mail.md'), 'utf8').replace(/\s+/g, ' ');
    const sentence = /Reply-To is the first field whose name is, ignoring case, one of (.*?) and whose value/.exec(doc);
    expect(sentence).not.toBeNull();
    const listed = [...(sentence?.[1] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    expect([...listed].sort()).toEqual([...REPLY_TO_FIELDS].sort());
    for (const name of listed) {
      expect(replyToOf({ message: 'hi', [name as string]: 'ada@example.com' })).toBe('ada@example.com');
      expect(replyToOf({ [(name as string).toUpperCase()]: 'ada@example.com' })).toBe('ada@example.com');
    }
    expect(replyToOf({ contact: 'ada@example.com', emails: 'ada@example.com' })).toBeUndefined();
    expect(replyToOf({ email: 'not an address', reply_to: 'b@example.com' })).toBe('b@example.com');
  });
});
