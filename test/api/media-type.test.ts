import { describe, expect, it } from 'vitest';
import { jsonContentTypeRefusal } from '../../src/http/media-type.ts';

describe('jsonContentTypeRefusal', () => {
  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'Application/JSON ; Charset=UTF-8',
    'application/json;charset="utf-8"',
    'application/json; charset=UTF8',
    'application/merge-patch+json',
    'application/vnd.api+json; charset=utf-8',
    'application/json; version=2',
  ])('accepts %s', (header) => {
    expect(jsonContentTypeRefusal(header)).toBeNull();
  });

  it.each([
    ['text/plain', '"text/plain"'],
    ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded'],
    ['application/jsonp', 'application/jsonp'],
    ['text/json', 'text/json'],
  ])('refuses %s, naming it', (header, named) => {
    expect(jsonContentTypeRefusal(header)).toContain(named);
  });

  it('refuses a charset other than UTF-8, naming it', () => {
    expect(jsonContentTypeRefusal('application/json; charset=latin1')).toContain('"latin1"');
    expect(jsonContentTypeRefusal('application/json; charset=ISO-8859-1')).toContain('"iso-8859-1"');
  });

  it('refuses a missing Content-Type', () => {
    expect(jsonContentTypeRefusal(undefined)).toMatch(/No Content-Type/);
  });
});
