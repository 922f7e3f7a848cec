-- What answered a message, kept for the owner to read after the sender
-- polled the response away: {action, responses, by: {id, name, email}, at}.
-- NULL until answered, and for approval messages (their votes say it).
ALTER TABLE messages ADD COLUMN outcome TEXT;
