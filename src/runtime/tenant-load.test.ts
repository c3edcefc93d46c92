import { describe, expect, it } from 'vitest';
import { createTenantLoad, RECENTLY_MS } from './tenant-load.ts';

describe('the count of what runs per tenant', () => {
  it('counts a tenant’s API requests apart from its webhooks', () => {
    const load = createTenantLoad();
    load.began('a', 'api');
    load.began('a', 'inbound');
    load.began('b', 'api');
    expect(load.running('a')).toBe(1);
    expect(load.active()).toBe(2);
  });

  it('sees another tenant busy while a webhook for it is being accepted, and for a while after it is done', () => {
    let clock = 0;
    const load = createTenantLoad({ now: () => clock });
    load.began('b', 'inbound');
    expect(load.othersBusy('a')).toBe(true);
    expect(load.othersBusy('b')).toBe(false);
    load.ended('b', 'inbound');
    clock += RECENTLY_MS - 1;
    expect(load.othersBusy('a')).toBe(true);
    expect(load.othersBusy('b')).toBe(false);
    clock += 1;
    expect(load.othersBusy('a')).toBe(false);
  });

  it('tells each tenant of the others’ latest work, whoever ended last', () => {
    let clock = 0;
    const load = createTenantLoad({ now: () => clock });
    load.began('a', 'api');
    load.ended('a', 'api');
    clock += 600;
    load.began('b', 'api');
    load.ended('b', 'api');
    load.began('b', 'api');
    load.ended('b', 'api');
    clock += 600;
    // a's last end was 1,200 ms ago, b's 600 ms ago.
    expect(load.othersBusy('a')).toBe(true);
    expect(load.othersBusy('b')).toBe(false);
    expect(load.othersBusy('c')).toBe(true);
  });

  it('ignores an end it never saw begin', () => {
    const load = createTenantLoad();
    load.ended('a', 'api');
    load.began('b', 'api');
    expect(load.active()).toBe(1);
    expect(load.othersBusy('a')).toBe(true);
  });
});
