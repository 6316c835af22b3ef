/**
 * multiverse_math_hard: arithmetic in an alternate universe (Nexusflow MultiverseMathHard).
 * Tools: POST /<function> for add, subtract, multiply, divide, power, log, sin, cos, pi, negate,
 * return_constant, each answering {"solution": <float>}. Verify gives 1.0 when every
 * ground-truth value is among the solutions the tools returned during the rollout.
 */
import { z } from 'zod';
import { ConfigError, HttpError } from '@nemo-gym/core/errors';
import { laxFloatFromStr } from '@nemo-gym/core/py';
import { BaseVerifyRequestSchema, emptyBodyDetail, notAnObjectDetail, RawJson, ResourcesServerConfigSchema, defineResourcesServer, startIfMain, validationDetail, validationError, type ValidationDetail } from '@nemo-gym/core/server';
import { ARG_NAMES, FUNCTIONS, PyException, callFunction, solutionJson, type Args } from './src/universe.js';
import { computeReward, parseGroundTruth } from './src/verify.js';
import { PythonLibm, PythonLibmError } from './src/pylibm.js';

export const MultiVerseMathHardConfigSchema = ResourcesServerConfigSchema.extend({
  /**
   * How log/sin/cos/pow are computed: `correctly_rounded` (pure TypeScript, the default) or
   * `python` (a local CPython's math module, bit-identical to upstream on the same C library).
   */
  float_backend: z.enum(['correctly_rounded', 'python']).default('correctly_rounded'),
  python_executable: z.string().default('python3'),
});

interface State {
  python: PythonLibm | null;
}

/** pydantic's lax int: ints, integral floats, integer strings and booleans. */
const PyInt = z.union([
  z.number().int(),
  z.boolean().transform((b) => (b ? 1 : 0)),
  z
    .string()
    .regex(/^\s*[+-]?\d(?:_?\d)*\s*$/, 'Input should be a valid integer, unable to parse string as an integer')
    .transform((s) => Number(s.trim().replace(/_/g, ''))),
]);

export const MultiVerseMathHardVerifyRequestSchema = BaseVerifyRequestSchema.extend({
  ground_truth: z.union([z.array(z.number()), z.string()]),
  id: PyInt,
  depth: PyInt,
  breadth: PyInt,
});

/** Validates a tool body like upstream's model `{a, b, radians, base: Optional[float]}` (lax floats, extras ignored). */
export function parseToolArgs(body: unknown): Args | ValidationDetail[] {
  if (body === undefined) return emptyBodyDetail();
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return [notAnObjectDetail(body)];
  const args: Args = {};
  const errors: ValidationDetail[] = [];
  for (const key of ARG_NAMES) {
    const v = (body as Record<string, unknown>)[key];
    if (v === undefined || v === null) continue;
    if (typeof v === 'number') args[key] = v;
    else if (typeof v === 'boolean') args[key] = v ? 1 : 0;
    else if (typeof v === 'string') {
      const f = laxFloatFromStr(v);
      if (f === null) {
        errors.push(validationDetail('float_parsing', [key], 'Input should be a valid number, unable to parse string as a number', v));
      } else args[key] = f;
    } else errors.push(validationDetail('float_type', [key], 'Input should be a valid number', v));
  }
  return errors.length ? errors : args;
}

export const server = defineResourcesServer({
  className: 'MultiVerseMathHardResourcesServer',
  configSchema: MultiVerseMathHardConfigSchema,
  setup: async (ctx): Promise<State> => {
    if (ctx.config.float_backend !== 'python') return { python: null };
    const python = new PythonLibm(ctx.config.python_executable);
    try {
      await python.evaluate([['log', [2]]]);
    } catch (err) {
      python.close();
      throw new ConfigError(
        `multiverse_math_hard instance \`${ctx.config.name}\`: float_backend is python but ${ctx.config.python_executable} cannot be run (${(err as Error).message}); install python3, set python_executable, or use float_backend: correctly_rounded`,
      );
    }
    return { python };
  },
  close: (ctx) => {
    ctx.state.python?.close();
  },
  verify: {
    body: MultiVerseMathHardVerifyRequestSchema,
    handler: (body) => {
      const groundTruth = parseGroundTruth(body.ground_truth);
      if (typeof groundTruth === 'string') {
        throw validationError(validationDetail('value_error', ['ground_truth'], groundTruth, body.ground_truth));
      }
      const reward = computeReward(groundTruth, body.response.output as { type?: unknown; output?: unknown }[]);
      return { responses_create_params: body.responses_create_params, response: body.response, reward };
    },
  },
  routes: (app, ctx) => {
    // Upstream registers a catch-all POST /{path} after the base routes; the static routes
    // (/verify, /seed_session) take precedence in the router.
    app.post<{ Params: { path: string } }>('/:path', async (request, reply) => {
      const parsed = parseToolArgs(request.body);
      if (Array.isArray(parsed)) throw validationError(...parsed);
      const name = request.params.path;
      if (!Object.prototype.hasOwnProperty.call(FUNCTIONS, name)) throw new HttpError(404, 'Function not found');
      let solution: number;
      try {
        const python = ctx.state.python;
        if (python) {
          try {
            solution = await python.run((libm) => callFunction(name, parsed, libm));
          } catch (err) {
            if (!(err instanceof PythonLibmError)) throw err;
            ctx.log.warn(`${err.message}; computing ${name} with the correctly rounded functions instead`);
            solution = callFunction(name, parsed);
          }
        } else solution = callFunction(name, parsed);
      } catch (err) {
        if (err instanceof PyException) throw new HttpError(500, err.message);
        throw err;
      }
      const out = new RawJson(solutionJson(solution));
      return reply.type('application/json').send(out.text);
    });
  },
});

startIfMain(import.meta.url, server);
