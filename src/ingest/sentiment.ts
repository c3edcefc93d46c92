import Sentiment from 'sentiment';

const analyzer = new Sentiment();

/** AFINN-based sentiment of a message, as -1 (negative) … 1 (positive). */
export function sentimentOf(text: string): number {
  if (!text.trim()) return 0;
  const { comparative } = analyzer.analyze(text);
  return Math.max(-1, Math.min(1, comparative / 2));
}
