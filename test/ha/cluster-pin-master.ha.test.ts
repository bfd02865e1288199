/** A lossy failover of the Redis Cluster master holding a seller's pin, not its shard (cluster-failover-case.ts). */
import { describeClusterFailover } from './cluster-failover-case.js';

describeClusterFailover('pin');
