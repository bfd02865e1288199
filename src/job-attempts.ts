/**
 * The most MAX_ATTEMPTS may be (config.ts). Every job carries it as BullMQ's own
 * count (queue.ts, jobOptions): the pool's MAX_ATTEMPTS decides when a row gives up.
 * A module of its own so that a worker process reads it without the settings schema.
 */
export const MAX_ATTEMPTS_CEILING = 100;
