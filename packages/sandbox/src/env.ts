// The environment of sandboxed code: an allow-list, never the server's own environment (which
// holds API keys and other secrets).
const STANDARD_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export function sandboxEnv(workdir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: STANDARD_PATH,
    HOME: workdir,
    TMPDIR: workdir,
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    PYTHONIOENCODING: 'utf-8',
    PYTHONDONTWRITEBYTECODE: '1',
    PYTHONNOUSERSITE: '1',
    OMP_NUM_THREADS: '1',
    OPENBLAS_NUM_THREADS: '1',
    MKL_NUM_THREADS: '1',
    NUMEXPR_NUM_THREADS: '1',
    MPLBACKEND: 'Agg',
    ...extra,
  };
}
