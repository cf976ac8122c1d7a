import Router from "@koa/router";
import type { OpenAPIRegistry } from "../http/openapi";
import { mountCancelJob, registerCancelJobOpenApi } from "./routes/cancel-job";
import { mountCreateJob, registerCreateJobOpenApi } from "./routes/create-job";
import type { JobRouteDeps } from "./routes/deps";
import { mountGetJob, registerGetJobOpenApi } from "./routes/get-job";
import { mountJobEvents, registerJobEventsOpenApi } from "./routes/job-events";
import { mountJobRows, registerJobRowsOpenApi } from "./routes/job-rows";
import { mountListJobs, registerListJobsOpenApi } from "./routes/list-jobs";
import { mountResumeJob, registerResumeJobOpenApi } from "./routes/resume-job";

export { JobStore } from "./job-store";
export { cancelledJobsWithdrawn } from "./resend-guard";
export { JobPlanner } from "./planner";
export { JobRunner, DEFAULT_RUNNER_OPTIONS, type JobRunnerOptions } from "./runner";
export { JOB_OPERATION_KINDS } from "./operation-kinds";
export type { JobRouteDeps };
export { READ as JOB_READ, WRITE_ANY_KIND as JOB_WRITE } from "./routes/deps";

/** /jobs: airdrops and whitelists of any size, planned into batches and run to the end (API.md, "Jobs"). */
export function createJobRouter(deps: JobRouteDeps): Router {
  const router = new Router();
  mountCreateJob(router, deps);
  mountListJobs(router, deps);
  mountGetJob(router, deps);
  mountJobRows(router, deps);
  mountJobEvents(router, deps);
  mountResumeJob(router, deps);
  mountCancelJob(router, deps);
  return router;
}

export function registerJobOpenApi(registry: OpenAPIRegistry): void {
  registerCreateJobOpenApi(registry);
  registerListJobsOpenApi(registry);
  registerGetJobOpenApi(registry);
  registerJobRowsOpenApi(registry);
  registerJobEventsOpenApi(registry);
  registerResumeJobOpenApi(registry);
  registerCancelJobOpenApi(registry);
}
