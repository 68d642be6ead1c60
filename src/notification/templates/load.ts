/**
 * The operator's templates (docs/copy.md): files of `templates.dir`, one per locale (`de.json`,
 * `pt-BR.yaml`), then the config's `templates.locales` section, each overriding the shipped
 * templates field by field. Read and checked when the configuration is validated, so a broken
 * template is a start-up error; compiled again (cheaply) by the service that renders with it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { TemplatesConfig } from '../../config/defaults.ts';
import { compileTemplates, TemplateError, type Copywriter, type TemplateSource } from './compile.ts';

const TEMPLATE_FILE_EXTENSIONS = ['.json', '.yaml', '.yml'];

/** The sources of `config`, in override order, and every problem reading them. */
export function templateSources(config: TemplatesConfig): { sources: TemplateSource[]; problems: string[] } {
  const sources: TemplateSource[] = [];
  const problems: string[] = [];
  if (config.dir !== '') {
    let files: string[] = [];
    try {
      files = readdirSync(config.dir).sort();
    } catch (err) {
      problems.push(`templates.dir: cannot read ${config.dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    for (const file of files) {
      if (file.startsWith('.')) continue;
      const extension = extname(file).toLowerCase();
      if (!TEMPLATE_FILE_EXTENSIONS.includes(extension)) {
        problems.push(`templates.dir: ${file} is not a template file (one <locale>.json, .yaml or .yml per locale)`);
        continue;
      }
      const origin = `templates.dir ${file}`;
      try {
        const text = readFileSync(join(config.dir, file), 'utf8');
        const templates: unknown = extension === '.json' ? JSON.parse(text) : parseYaml(text);
        sources.push({ origin, locale: file.slice(0, -extension.length), templates });
      } catch (err) {
        problems.push(`templates (${origin}): ${(err as Error).message}`);
      }
    }
  }
  for (const [locale, templates] of Object.entries(config.locales)) sources.push({ origin: 'config templates.locales', locale, templates });
  return { sources, problems };
}

/**
 * The shipped templates with the operator's on top.
 *
 * @throws TemplateError listing every problem (files, syntax, placeholders, plural forms, locales).
 */
export function loadCopywriter(config: TemplatesConfig): Copywriter {
  const { sources, problems } = templateSources(config);
  let copywriter: Copywriter | null = null;
  try {
    copywriter = compileTemplates(sources, config.default_locale);
  } catch (err) {
    if (!(err instanceof TemplateError)) throw err;
    problems.push(...err.problems);
  }
  if (problems.length > 0 || copywriter === null) throw new TemplateError(problems);
  return copywriter;
}

/** Every problem of the `templates` section, one line each (config validation). */
export function templateConfigProblems(config: TemplatesConfig): string[] {
  try {
    loadCopywriter(config);
    return [];
  } catch (err) {
    if (err instanceof TemplateError) return err.problems;
    return [`templates: ${(err as Error).message}`];
  }
}
