import { z } from 'zod';
import { AppError } from '@sandbox/errors';
import type { PlanLimits } from '../limits/plans';
import { workspaceRelativePath } from './workspace-path';

/** A file in a request: UTF-8 text, or base64 with `encoding: "base64"`. */
export const fileInput = z.object({
  path: z.string().min(1),
  content: z.string(),
  encoding: z.enum(['utf8', 'base64']).optional(),
});

export type FileInputBody = z.output<typeof fileInput>;

export interface DecodedFile {
  path: string;
  content: Buffer;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Checks the path and the plan's size limit (413 file_too_large) and decodes the content. */
export function decodeFile(file: FileInputBody, limits: PlanLimits): DecodedFile {
  const path = workspaceRelativePath(file.path);
  if (file.encoding === 'base64' && !BASE64.test(file.content.replace(/\s/g, ''))) {
    throw new AppError('invalid_request', `content of "${file.path}" is not valid base64`, {
      details: { field: 'content', path: file.path },
    });
  }
  const content =
    file.encoding === 'base64'
      ? Buffer.from(file.content, 'base64')
      : Buffer.from(file.content, 'utf8');
  if (content.length > limits.maxFileSizeBytes) {
    throw new AppError(
      'file_too_large',
      `"${file.path}" is larger than ${limits.maxFileSizeBytes} bytes`,
      {
        details: { path: file.path, size: content.length, limit: limits.maxFileSizeBytes },
      },
    );
  }
  return { path, content };
}

/** The files of an execute request: at most the plan's count, each checked. */
export function decodeFiles(files: readonly FileInputBody[], limits: PlanLimits): DecodedFile[] {
  if (files.length > limits.maxFilesPerRequest) {
    throw new AppError(
      'invalid_request',
      `At most ${limits.maxFilesPerRequest} files per request`,
      {
        details: { field: 'files', count: files.length, max: limits.maxFilesPerRequest },
      },
    );
  }
  return files.map((file) => decodeFile(file, limits));
}
