/** The median of a bench's figures (the upper middle of an even count), as every bench reports it. */
export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
