import { fileDownloadUrl, type Config, type Db, type Nats, type SecretBox, type SubmissionEvent } from '@intake/shared';

/** What fanning out needs of the platform. */
export interface FanOutDeps {
  db: Db;
  nats: Nats;
  config: Pick<Config, 'PUBLIC_BASE_URL' | 'RECONCILE_AFTER'>;
  secrets: SecretBox;
}

/** The envelope `data` of a submission.created delivery: the spec's fields plus the files with signed download links. */
export function submissionData(props: {
  event: SubmissionEvent;
  config: Pick<Config, 'PUBLIC_BASE_URL'>;
  secrets: SecretBox;
  now: Date;
}): Record<string, unknown> {
  const { event } = props;
  return {
    submission_id: event.submission_id,
    form_id: event.form_id,
    payload: event.payload,
    files: event.files.map((f) => ({
      id: f.id,
      field: f.field,
      filename: f.filename,
      content_type: f.content_type,
      size: f.size,
      url: fileDownloadUrl({ config: props.config, secrets: props.secrets, fileId: f.id, now: props.now }),
    })),
  };
}
