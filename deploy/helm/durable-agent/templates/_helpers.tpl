{{/* The release's name for its objects, at most 63 characters with a component's suffix. */}}
{{- define "durable-agent.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "durable-agent.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels every object carries; the selector labels of a component are added by its caller. */}}
{{- define "durable-agent.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "durable-agent.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component: call with (dict "root" $ "component" "worker"). */}}
{{- define "durable-agent.selectorLabels" -}}
app.kubernetes.io/name: {{ include "durable-agent.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "durable-agent.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "durable-agent.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "durable-agent.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/*
What the chart refuses to render, each with what to set: a release that would start and then fail
(or lose payloads between pods) is not made at all. values.schema.json refuses misspelt keys and
unknown modes before this.
*/}}
{{- define "durable-agent.validate" -}}
{{- if and (not .Values.temporal.address) (not .Values.temporal.config.secretName) -}}
{{- fail "temporal.address is required (host:port of your Temporal frontend or Temporal Cloud's endpoint), unless temporal.config.secretName holds a client profile that names it" -}}
{{- end -}}
{{- $blob := .Values.blobStore -}}
{{- if eq $blob.type "s3" -}}
{{- if not $blob.s3.bucket -}}
{{- fail "blobStore.s3.bucket is required with blobStore.type s3 (or choose postgres, or directory on a ReadWriteMany claim)" -}}
{{- end -}}
{{- else if eq $blob.type "postgres" -}}
{{- if not $blob.secretName -}}
{{- fail "blobStore.secretName is required with blobStore.type postgres: a Secret with DURABLE_AGENT_BLOB_POSTGRES_URL" -}}
{{- end -}}
{{- else if eq $blob.type "directory" -}}
{{- if not $blob.directory.existingClaim -}}
{{- fail "blobStore.directory.existingClaim is required with blobStore.type directory: a ReadWriteMany claim every pod mounts, since a pod's own disk is read by no other pod" -}}
{{- end -}}
{{- end -}}
{{- if and .Values.gateway.enabled (not .Values.gateway.tokens.secretName) -}}
{{- fail "gateway.tokens.secretName is required with the gateway enabled: a Secret holding its tokens.json" -}}
{{- end -}}
{{- end -}}

{{/* Temporal's client settings and the blob store's, which workers and the gateway share. */}}
{{- define "durable-agent.sharedEnv" -}}
{{- $temporal := .Values.temporal -}}
{{- if $temporal.address }}
- name: TEMPORAL_ADDRESS
  value: {{ $temporal.address | quote }}
{{- end }}
- name: TEMPORAL_NAMESPACE
  value: {{ $temporal.namespace | quote }}
- name: AGENT_TASK_QUEUE
  value: {{ $temporal.taskQueue | quote }}
{{- if $temporal.tls }}
- name: TEMPORAL_TLS
  value: "true"
{{- end }}
{{- if $temporal.apiKey.secretName }}
- name: TEMPORAL_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ $temporal.apiKey.secretName }}
      key: {{ $temporal.apiKey.key }}
{{- end }}
{{- if $temporal.config.secretName }}
- name: TEMPORAL_CONFIG_FILE
  value: {{ printf "/etc/temporal/%s" $temporal.config.file | quote }}
{{- end }}
{{- if $temporal.config.profile }}
- name: TEMPORAL_PROFILE
  value: {{ $temporal.config.profile | quote }}
{{- end }}
{{- $blob := .Values.blobStore }}
- name: DURABLE_AGENT_BLOB_STORE
  value: {{ $blob.type | quote }}
{{- if eq $blob.type "s3" }}
- name: DURABLE_AGENT_BLOB_S3_BUCKET
  value: {{ $blob.s3.bucket | quote }}
{{- range $name, $value := dict "DURABLE_AGENT_BLOB_S3_PREFIX" $blob.s3.prefix "DURABLE_AGENT_BLOB_S3_REGION" $blob.s3.region "DURABLE_AGENT_BLOB_S3_ENDPOINT" $blob.s3.endpoint }}
{{- if $value }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- end }}
{{- if $blob.s3.forcePathStyle }}
- name: DURABLE_AGENT_BLOB_S3_FORCE_PATH_STYLE
  value: "true"
{{- end }}
{{- else if eq $blob.type "postgres" }}
{{- if $blob.postgres.table }}
- name: DURABLE_AGENT_BLOB_POSTGRES_TABLE
  value: {{ $blob.postgres.table | quote }}
{{- end }}
{{- else }}
- name: DURABLE_AGENT_BLOB_DIR
  value: /data/blobs
{{- end }}
{{- end -}}

{{/* Secrets whose keys become environment variables: the blob store's, then `extra`. */}}
{{- define "durable-agent.envFrom" -}}
{{- $names := list -}}
{{- if .root.Values.blobStore.secretName -}}
{{- $names = append $names .root.Values.blobStore.secretName -}}
{{- end -}}
{{- range .extra -}}
{{- if . -}}
{{- $names = append $names . -}}
{{- end -}}
{{- end -}}
{{- range $names }}
- secretRef:
    name: {{ . }}
{{- end }}
{{- end -}}

{{/* `NAME: value` pairs as environment variables, in name order. */}}
{{- define "durable-agent.extraEnv" -}}
{{- range $name, $value := . }}
- name: {{ $name }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- end -}}

{{/* Volumes for Temporal's client file and a directory blob store, which both components mount. */}}
{{- define "durable-agent.sharedVolumes" -}}
{{- if .Values.temporal.config.secretName }}
- name: temporal-config
  secret:
    secretName: {{ .Values.temporal.config.secretName }}
{{- end }}
{{- if eq .Values.blobStore.type "directory" }}
- name: blobs
  persistentVolumeClaim:
    claimName: {{ .Values.blobStore.directory.existingClaim }}
{{- end }}
{{- end -}}

{{- define "durable-agent.sharedVolumeMounts" -}}
{{- if .Values.temporal.config.secretName }}
- name: temporal-config
  mountPath: /etc/temporal
  readOnly: true
{{- end }}
{{- if eq .Values.blobStore.type "directory" }}
- name: blobs
  mountPath: /data
{{- end }}
{{- end -}}

{{/*
A container that holds nothing it was not given: no privilege, no capability, a read-only root file
system (the image's writable places are volumes). The worker's sandbox settings are added by it.
*/}}
{{- define "durable-agent.containerSecurity" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
runAsUser: 1000
runAsGroup: 1000
capabilities:
  drop:
    - ALL
{{- end -}}
