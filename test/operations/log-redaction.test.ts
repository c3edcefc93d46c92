import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/http/log-redaction.ts';

describe('request URLs in logs', () => {
  it.each([
    ['/x?hub.mode=subscribe&hub.verify_token=s3cret&hub.challenge=1', '/x?hub.mode=subscribe&hub.verify_token=[redacted]&hub.challenge=1'],
    [
      '/x?access_token=a&api_key=b&apiKey=c&client_secret=d',
      '/x?access_token=[redacted]&api_key=[redacted]&apiKey=[redacted]&client_secret=[redacted]',
    ],
    ['/x?password=a&sig=b&signature=c&code=d', '/x?password=[redacted]&sig=[redacted]&signature=[redacted]&code=[redacted]'],
    ['/x?hub%2Everify%5Ftoken=a', '/x?hub%2Everify%5Ftoken=[redacted]'],
    [
      '/graphql?query=mutation%7Blogin%7D&variables=%7B%7D&operationName=L',
      '/graphql?query=[redacted]&variables=[redacted]&operationName=L',
    ],
    ['/api/v1/customers?limit=5&cursor=abc', '/api/v1/customers?limit=5&cursor=abc'],
    ['/api/v1/customers', '/api/v1/customers'],
    ['/x?token', '/x?token=[redacted]'],
  ])('logs %s as %s', (url, logged) => {
    expect(redactUrl(url)).toBe(logged);
  });
});
