import { mailboxOf } from './notifications';

describe('mailboxOf', () => {
  it.each([
    ['Ada@Example.com', 'ada@example.com'],
    ['ada+news@example.com', 'ada@example.com'],
    ['ada+a+b@example.com', 'ada@example.com'],
    ['a.d.a@example.com', 'a.d.a@example.com'], // dots matter outside Gmail
    ['A.Da+x@gmail.com', 'ada@gmail.com'],
    ['ada@googlemail.com', 'ada@gmail.com'],
    ['+only@example.com', '+only@example.com'], // a local part that is all tag is left as it is
    [' ada@example.com ', 'ada@example.com'],
  ])('%s is the mailbox %s', (address, mailbox) => {
    expect(mailboxOf(address)).toBe(mailbox);
  });
});
