import { describe, expect, it } from 'vitest';
import { createTenantLoad } from './tenant-load.ts';

describe('the count of what runs per tenant', () => {
  it('counts a tenant’s API requests apart from its webhooks', () => {
    const load = createTenantLoad();
    load.began('a', 'api');
    load.began('a', 'inbound');
    load.began('b', 'api');
    expect(load.running('a')).toBe(1);
    expect(load.active()).toBe(2);
  });

  it('sees another tenant busy while a webhook for it is being accepted, and not once it is done', () => {
    const load = createTenantLoad();
    load.began('b', 'inbound');
    expect(load.othersBusy('a')).toBe(true);
    expect(load.othersBusy('b')).toBe(false);
    load.ended('b', 'inbound');
    expect(load.othersBusy('a')).toBe(false);
  });

  it('ignores an end it never saw begin', () => {
    const load = createTenantLoad();
    load.ended('a', 'api');
    load.began('b', 'api');
    expect(load.active()).toBe(1);
    expect(load.othersBusy('a')).toBe(true);
  });
});
