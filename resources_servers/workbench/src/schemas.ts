/**
 * Function-tool declarations for the 27 tools, for datasets (`responses_create_params.tools`).
 * Parameter names and types are the tools' own; the descriptions are written for this project.
 */
type Prop = { type: 'string' | 'integer'; description: string };

function tool(name: string, description: string, properties: Record<string, Prop>, required: string[] = []) {
  return {
    type: 'function' as const,
    name,
    description,
    parameters: { type: 'object', properties, required, additionalProperties: false },
    strict: false,
  };
}

const s = (description: string): Prop => ({ type: 'string', description });
const i = (description: string): Prop => ({ type: 'integer', description });
const PAGE = { page: i('Which page of results to return, starting at 1'), page_size: i('How many results per page') };
const DATE_RANGE = {
  time_min: s('First day to include, YYYY-MM-DD'),
  time_max: s('Last day to include, YYYY-MM-DD'),
};

export const TOOL_SCHEMAS = [
  tool('company_directory_find_email_address', 'Looks up colleagues\' email addresses by (part of) their name, ignoring case.', {
    name: s('A name or part of one'),
  }),
  tool('email_get_email_information_by_id', 'Returns one field of the email with the given ID.', {
    email_id: s('ID of the email'),
    field: s("Field to return: 'email_id', 'inbox/outbox', 'sender/recipient', 'subject', 'sent_datetime' or 'body'"),
  }, ['email_id', 'field']),
  tool('email_search_emails', 'Finds emails whose subject, body and sender/recipient together contain every word of the query; newest first.', {
    query: s('Words to look for'),
    date_min: s('Earliest sent date to include, YYYY-MM-DD'),
    date_max: s('Latest sent date to include, YYYY-MM-DD'),
    ...PAGE,
  }),
  tool('email_send_email', 'Sends an email.', {
    recipient: s('Email address to send to'),
    subject: s('Subject line'),
    body: s('Text of the email'),
  }, ['recipient', 'subject', 'body']),
  tool('email_delete_email', 'Deletes the email with the given ID.', { email_id: s('ID of the email to delete') }, ['email_id']),
  tool('email_forward_email', 'Forwards the email with the given ID to a recipient.', {
    email_id: s('ID of the email to forward'),
    recipient: s('Email address to forward it to'),
  }, ['email_id', 'recipient']),
  tool('email_reply_email', 'Replies to the email with the given ID.', {
    email_id: s('ID of the email to answer'),
    body: s('Text of the reply'),
  }, ['email_id', 'body']),
  tool('calendar_get_event_information_by_id', 'Returns one field of the calendar event with the given 8-digit ID.', {
    event_id: s('8-digit ID of the event'),
    field: s("Field to return: 'event_id', 'event_name', 'participant_email', 'event_start' or 'duration'"),
  }, ['event_id', 'field']),
  tool('calendar_search_events', 'Finds calendar events whose name or participant matches the query, optionally within a time window; latest first.', {
    query: s('Text to match against event names and participant emails'),
    time_min: s('Earliest start to include, YYYY-MM-DD HH:MM:SS'),
    time_max: s('Latest start to include, YYYY-MM-DD HH:MM:SS'),
    ...PAGE,
  }),
  tool('calendar_create_event', 'Adds an event to the calendar and returns its ID.', {
    event_name: s('Name of the event'),
    participant_email: s('Email address of the participant'),
    event_start: s('Start time, YYYY-MM-DD HH:MM:SS'),
    duration: s('Length in minutes'),
  }, ['event_name', 'participant_email', 'event_start', 'duration']),
  tool('calendar_delete_event', 'Removes the calendar event with the given 8-digit ID.', { event_id: s('8-digit ID of the event') }, ['event_id']),
  tool('calendar_update_event', 'Changes one field of a calendar event.', {
    event_id: s('8-digit ID of the event'),
    field: s("Field to change: 'event_name', 'participant_email', 'event_start' or 'duration'"),
    new_value: s('The new value'),
  }, ['event_id', 'field', 'new_value']),
  tool('analytics_engaged_users_count', 'Counts engaged visitors per day in a date range.', DATE_RANGE),
  tool('analytics_get_visitor_information_by_id', 'Returns every recorded visit of a visitor.', { visitor_id: s('ID of the visitor') }, ['visitor_id']),
  tool('analytics_create_plot', 'Draws a chart of a website metric over a date range and returns the image path.', {
    ...DATE_RANGE,
    value_to_plot: s("Metric: 'total_visits', 'session_duration_seconds', 'user_engaged', 'visits_direct', 'visits_referral', 'visits_search_engine' or 'visits_social_media'"),
    plot_type: s("Chart type: 'bar', 'line', 'scatter' or 'histogram'"),
  }, ['time_min', 'time_max', 'value_to_plot', 'plot_type']),
  tool('analytics_traffic_source_count', 'Counts visits per day in a date range, optionally only those from one traffic source.', {
    ...DATE_RANGE,
    traffic_source: s("Source: 'direct', 'referral', 'search engine' or 'social media'"),
  }),
  tool('analytics_total_visits_count', 'Counts visits per day in a date range.', DATE_RANGE),
  tool('analytics_get_average_session_duration', 'Average visit length in seconds per day in a date range.', DATE_RANGE),
  tool('project_management_get_task_information_by_id', 'Returns one field of the task with the given ID.', {
    task_id: s('ID of the task'),
    field: s("Field to return: 'task_id', 'task_name', 'assigned_to_email', 'list_name', 'due_date' or 'board'"),
  }, ['task_id', 'field']),
  tool('project_management_search_tasks', 'Finds tasks matching every given criterion.', {
    task_name: s('Text in the task name'),
    assigned_to_email: s('Exact email address of the assignee'),
    list_name: s("List: 'Backlog', 'In Progress', 'In Review' or 'Completed'"),
    due_date: s('Due date, YYYY-MM-DD'),
    board: s("Board: 'Back end', 'Front end' or 'Design'"),
  }),
  tool('project_management_create_task', 'Creates a task and returns its ID.', {
    task_name: s('Name of the task'),
    assigned_to_email: s('Email address of a team member'),
    list_name: s("List: 'Backlog', 'In Progress', 'In Review' or 'Completed'"),
    due_date: s('Due date, YYYY-MM-DD'),
    board: s("Board: 'Back end', 'Front end' or 'Design'"),
  }, ['task_name', 'assigned_to_email', 'list_name', 'due_date', 'board']),
  tool('project_management_delete_task', 'Deletes the task with the given ID.', { task_id: s('ID of the task') }, ['task_id']),
  tool('project_management_update_task', 'Changes one field of a task.', {
    task_id: s('ID of the task'),
    field: s("Field to change: 'task_name', 'assigned_to_email', 'list_name', 'due_date' or 'board'"),
    new_value: s('The new value'),
  }, ['task_id', 'field', 'new_value']),
  tool('customer_relationship_manager_search_customers', 'Finds customers matching every given criterion.', {
    customer_name: s('Text in the customer name'),
    customer_email: s('Text in the customer email'),
    product_interest: s("Product: 'Software', 'Hardware', 'Services', 'Consulting' or 'Training'"),
    status: s("Status: 'Qualified', 'Won', 'Lost', 'Lead' or 'Proposal'"),
    assigned_to_email: s('Email address of the account owner'),
    last_contact_date_min: s('Earliest last contact date, YYYY-MM-DD'),
    last_contact_date_max: s('Latest last contact date, YYYY-MM-DD'),
    follow_up_by_min: s('Earliest follow-up date, YYYY-MM-DD'),
    follow_up_by_max: s('Latest follow-up date, YYYY-MM-DD'),
    ...PAGE,
  }),
  tool('customer_relationship_manager_update_customer', 'Changes one field of a customer record.', {
    customer_id: s('ID of the customer'),
    field: s("Field to change: 'customer_name', 'assigned_to_email', 'customer_email', 'customer_phone', 'last_contact_date', 'product_interest', 'status', 'notes' or 'follow_up_by'"),
    new_value: s('The new value'),
  }, ['customer_id', 'field', 'new_value']),
  tool('customer_relationship_manager_add_customer', 'Adds a customer and returns the new ID.', {
    customer_name: s('Name of the customer'),
    assigned_to_email: s('Email address of the account owner'),
    status: s("Status: 'Qualified', 'Won', 'Lost', 'Lead' or 'Proposal'"),
    customer_email: s('Email address of the customer'),
    customer_phone: s('Phone number of the customer'),
    last_contact_date: s('Date of the last contact, YYYY-MM-DD'),
    product_interest: s("Product: 'Software', 'Hardware', 'Services', 'Consulting' or 'Training'"),
    notes: s('Free-text notes'),
    follow_up_by: s('Follow-up date, YYYY-MM-DD'),
  }, ['customer_name', 'assigned_to_email', 'status']),
  tool('customer_relationship_manager_delete_customer', 'Deletes the customer with the given ID.', { customer_id: s('ID of the customer') }, ['customer_id']),
];
