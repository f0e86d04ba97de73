import { SecretBox } from './secrets';

describe('SecretBox', () => {
  const box = new SecretBox('test-secrets-key-0123456789abcdef');

  it('round-trips and never stores the plaintext', () => {
    const sealed = box.seal('whsec_abc');
    expect(sealed).not.toContain('whsec_abc');
    expect(box.open(sealed)).toBe('whsec_abc');
    expect(box.seal('whsec_abc')).not.toBe(sealed);
  });

  it('refuses tampered ciphertext and other keys', () => {
    const sealed = box.seal('whsec_abc');
    const tampered = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'BB' : 'AA');
    expect(() => box.open(tampered)).toThrow();
    expect(() => new SecretBox('another-secrets-key-0123456789').open(sealed)).toThrow();
  });

  it('signs and verifies link tokens', () => {
    const sig = box.sign('fil_1:1700000000');
    expect(box.verify('fil_1:1700000000', sig)).toBe(true);
    expect(box.verify('fil_1:1700000001', sig)).toBe(false);
  });
});
